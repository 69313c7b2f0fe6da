/* ptx.h: IR -> PTX text for sm_90a, with the metadata block the runtime
 * reads. The file format is specified in docs/format.md; in short:
 *
 *   //@tls version 1
 *   //@tls source examples/matmul_v5.tls
 *   //@tls entry NAME script=SCRIPT block=288 smem=197632
 *   //@tls config num_stages=4 block_m=128 ...           (autotune point)
 *   //@tls param m_size i32                              (in PTX order)
 *   //@tls param a_ptr ptr f16
 *   //@tls grid ((m_size+127)/128)*((n_size+255)/256) 1 1
 *   //@tls tmap 0 ptr=a_ptr dtype=f16 rank=2 dims=k_size,m_size
 *              strides=k_size*2 box=64,64 swizzle=128     (one line)
 *   //@tls end
 *
 * Expressions are integer infix over parameter names: + - * / % ( ) and
 * min(a,b), max(a,b); / and % are C's (truncating). Tensor-map dims, box
 * and strides are innermost first, as cuTensorMapEncodeTiled takes them;
 * strides are in bytes for dimensions 1..rank-1. The PTX entry takes the
 * user parameters in order, then one `.param .align 64 .b8 NAME[128]` per
 * tensor map in index order.
 */
#ifndef TLSC_PTX_H
#define TLSC_PTX_H

#include "ir/ir.h"

typedef struct PtxOptions {
  bool line_info; /* emit .file/.loc (default true) */
} PtxOptions;

/* Writes the whole module (metadata block, then PTX). Returns false after
 * reporting an error (nothing the user can fix should reach here, but a
 * construct the backend lacks is reported at its line, never a crash). */
bool ptx_emit(FILE *out, const IrModule *m, const PtxOptions *opt, Diag *d);

#endif
