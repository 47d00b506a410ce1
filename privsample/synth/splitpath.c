/* Alg. 4 split paths (privsample.synth.partition.SplitPath) in C.
 *
 * The same algorithm as SplitPath's NumPy steps, for speed only: PPSyn-DP computes a path for every
 * candidate clique's model marginal every round, and the NumPy version spends most of its time in
 * per-step interpreter overhead (benchmarks/ppsyn_time.py). Input is a public vector (a model
 * marginal) or, in paper mode, the true counts; nothing here is randomised.
 *
 * split_path(v, shape, max_parts, re_out, lo_out, hi_out) -> number of splits
 *   v:       float64, C-contiguous, prod(shape) cells
 *   shape:   int64[k]
 *   re_out:  float64[max_parts]            RE after 0, 1, ... splits
 *   lo_out, hi_out: int64[max_parts - 1, k] the region of the new (right) part at each split
 * Semantics (must match SplitPath._step): step t uses axis (t + j) mod k for the first j with a live
 * box of extent >= 2 on it; the box with the largest RE among those (ties: the oldest) is split at the
 * point s maximising round(RE(B) - RE(left) - RE(right), 9 decimals) (ties: smallest s).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Unlike SplitPath (whose NumPy direct branch stops at _DIRECT_CELLS), C always sums |x - mean| directly:
 * on PPSyn's Adult marginals it was 1.3x faster than sorting the slabs and binary searching (qsort and
 * the searches branch a lot), and the two give the same splits (tests/test_ppsyn.py). */
/* best_split evaluates SPLIT_BLOCK split points at once (fewer when the box has
 * few): each slab value is read once per block, and the block's sums are independent chains that the
 * CPU overlaps, four lanes per vector. Every (split, slab) sum still adds its r terms in order, so the
 * results are bit-identical to one split point at a time (and to SplitPath's NumPy steps, up to the
 * summation order NumPy uses). */
#define SPLIT_BLOCK 16
typedef double vec4 __attribute__((vector_size(32)));
typedef long long vec4i __attribute__((vector_size(32)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx2", "default"))) /* AVX2 when the CPU has it: 2x */
#else
#define CLONES
#endif

/* d[b] = sum_j |x[j] - q[b]| for b < 4 * nv (nv = 2 or 4 vectors of four split points). */
CLONES static void deviations(const double *x, int64_t r, const double *q, double *d, int nv) {
    const vec4i mask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    vec4 q0 = {q[0], q[1], q[2], q[3]}, q1 = {q[4], q[5], q[6], q[7]};
    vec4 d0 = {0, 0, 0, 0}, d1 = d0, d2 = d0, d3 = d0;
    if (nv == 2) {
        for (int64_t j = 0; j < r; j++) {
            vec4 xj = {x[j], x[j], x[j], x[j]};
            d0 += (vec4)((vec4i)(xj - q0) & mask); /* fabs, lane by lane (clears the sign bit) */
            d1 += (vec4)((vec4i)(xj - q1) & mask);
        }
    } else {
        vec4 q2 = {q[8], q[9], q[10], q[11]}, q3 = {q[12], q[13], q[14], q[15]};
        for (int64_t j = 0; j < r; j++) {
            vec4 xj = {x[j], x[j], x[j], x[j]};
            d0 += (vec4)((vec4i)(xj - q0) & mask);
            d1 += (vec4)((vec4i)(xj - q1) & mask);
            d2 += (vec4)((vec4i)(xj - q2) & mask);
            d3 += (vec4)((vec4i)(xj - q3) & mask);
        }
    }
    for (int b = 0; b < 4; b++) {
        d[b] = d0[b];
        d[4 + b] = d1[b];
        if (nv == 4) { d[8 + b] = d2[b]; d[12 + b] = d3[b]; }
    }
}

static double round9(double x) { return rint(x * 1e9) / 1e9; }

typedef struct {
    const double *v;
    int k;
    const int64_t *shape;
    int64_t strides[32];
    double *slab;   /* m * r gathered values */
    double *rowsum; /* m */
    double *cum;    /* m */
} ctx_t;

/* Gather box (lo, hi) into ctx->slab as m slabs of r cells along axis (each slab in C order); returns r.
 * Copies the box one run of its last axis at a time. */
static int64_t gather(ctx_t *c, const int64_t *lo, const int64_t *hi, int axis, int64_t m) {
    int k = c->k;
    int64_t idx[32], r = 1;
    for (int d = 0; d < k; d++) {
        idx[d] = lo[d];
        if (d != axis) r *= hi[d] - lo[d];
    }
    int64_t *pos = (int64_t *)malloc(sizeof(int64_t) * (size_t)m);
    for (int64_t i = 0; i < m; i++) pos[i] = i * r;
    int64_t run = hi[k - 1] - lo[k - 1];
    int64_t rows = r * m / run;
    for (int64_t n = 0; n < rows; n++) {
        int64_t off = lo[k - 1];
        for (int d = 0; d < k - 1; d++) off += idx[d] * c->strides[d];
        const double *src = c->v + off;
        if (axis == k - 1) {
            for (int64_t j = 0; j < run; j++) c->slab[pos[j]++] = src[j];
        } else {
            int64_t i = idx[axis] - lo[axis];
            memcpy(c->slab + pos[i], src, sizeof(double) * (size_t)run);
            pos[i] += run;
        }
        for (int d = k - 2; d >= 0; d--) { /* odometer in C order over all but the last axis */
            if (++idx[d] < hi[d]) break;
            idx[d] = lo[d];
        }
    }
    free(pos);
    return r;
}

static void best_split(ctx_t *c, const int64_t *lo, const int64_t *hi, int axis, double box_re,
                       int64_t *s_out, double *rel_out, double *rer_out) {
    int64_t m = hi[axis] - lo[axis];
    int64_t r = gather(c, lo, hi, axis, m);
    double acc = 0.0;
    for (int64_t i = 0; i < m; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < r; j++) s += c->slab[i * r + j];
        c->rowsum[i] = s;
        acc += s;
        c->cum[i] = acc;
    }
    double best = -INFINITY, bl = 0.0, br = 0.0;
    int64_t bs = 1;
    int block = m - 1 > 8 ? 16 : 8;
    for (int64_t s0 = 1; s0 < m; s0 += block) {
        int nb = (int)(m - s0 < block ? m - s0 : block);
        double ml[SPLIT_BLOCK], mr[SPLIT_BLOCK], rl[SPLIT_BLOCK], rr[SPLIT_BLOCK];
        for (int b = 0; b < block; b++) {
            int64_t s = s0 + (b < nb ? b : nb - 1);
            ml[b] = c->cum[s - 1] / ((double)s * (double)r);
            mr[b] = (c->cum[m - 1] - c->cum[s - 1]) / ((double)(m - s) * (double)r);
        }
        for (int b = 0; b < block; b++) rl[b] = rr[b] = 0.0;
        for (int64_t i = 0; i < m; i++) {
            /* slab i is left of split s0 + b when b > i - s0: all left below s0, all right from s0 + block - 1 */
            int64_t rel = i - s0;
            double q[SPLIT_BLOCK], d[SPLIT_BLOCK];
            const double *qp = rel < 0 ? ml : mr;
            if (rel >= 0 && rel < block - 1) {
                for (int b = 0; b < block; b++) q[b] = b > rel ? ml[b] : mr[b];
                qp = q;
            }
            deviations(c->slab + i * r, r, qp, d, block / 4);
            if (rel < 0) for (int b = 0; b < block; b++) rl[b] += d[b];
            else if (rel >= block - 1) for (int b = 0; b < block; b++) rr[b] += d[b];
            else for (int b = 0; b < block; b++) { if (b > rel) rl[b] += d[b]; else rr[b] += d[b]; }
        }
        for (int b = 0; b < nb; b++) {
            double gain = round9(box_re - rl[b] - rr[b]);
            if (gain > best) { best = gain; bs = s0 + b; bl = rl[b]; br = rr[b]; }
        }
    }
    *s_out = bs;
    *rel_out = bl > 0.0 ? bl : 0.0;
    *rer_out = br > 0.0 ? br : 0.0;
}

static PyObject *split_path(PyObject *self, PyObject *args) {
    PyObject *ov, *oshape, *ore, *olo, *ohi;
    Py_ssize_t max_parts;
    if (!PyArg_ParseTuple(args, "OOnOOO", &ov, &oshape, &max_parts, &ore, &olo, &ohi)) return NULL;
    Py_buffer bv, bs, bre, blo, bhi;
    if (PyObject_GetBuffer(ov, &bv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(oshape, &bs, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) { PyBuffer_Release(&bv); return NULL; }
    if (PyObject_GetBuffer(ore, &bre, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&bv); PyBuffer_Release(&bs); return NULL;
    }
    if (PyObject_GetBuffer(olo, &blo, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&bv); PyBuffer_Release(&bs); PyBuffer_Release(&bre); return NULL;
    }
    if (PyObject_GetBuffer(ohi, &bhi, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&bv); PyBuffer_Release(&bs); PyBuffer_Release(&bre); PyBuffer_Release(&blo); return NULL;
    }
    PyObject *result = NULL;
    int k = (int)(bs.len / (Py_ssize_t)sizeof(int64_t));
    const int64_t *shape = (const int64_t *)bs.buf;
    int64_t n = 1;
    for (int d = 0; d < k; d++) n *= shape[d];
    int64_t steps_cap = max_parts > 1 ? (int64_t)max_parts - 1 : 0;
    if (k < 1 || k > 32 || max_parts < 1 || bv.itemsize != 8 || bs.itemsize != 8 ||
        bv.len != n * (Py_ssize_t)sizeof(double) || bre.len < max_parts * (Py_ssize_t)sizeof(double) ||
        blo.len < steps_cap * k * (Py_ssize_t)sizeof(int64_t) || bhi.len < steps_cap * k * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "split_path: bad argument sizes");
        goto done;
    }
    {
        ctx_t c;
        c.v = (const double *)bv.buf;
        c.k = k;
        c.shape = shape;
        int64_t st = 1;
        for (int d = k - 1; d >= 0; d--) { c.strides[d] = st; st *= shape[d]; }
        int64_t nn = n > 0 ? n : 1;
        c.slab = (double *)malloc(sizeof(double) * (size_t)nn);
        c.rowsum = (double *)malloc(sizeof(double) * (size_t)(nn + 1));
        c.cum = (double *)malloc(sizeof(double) * (size_t)(nn + 1));
        int64_t cap = 2 * (int64_t)max_parts + 1;
        int64_t *blo_ = (int64_t *)calloc((size_t)(cap * k), sizeof(int64_t));
        int64_t *bhi_ = (int64_t *)calloc((size_t)(cap * k), sizeof(int64_t));
        double *bre_ = (double *)calloc((size_t)cap, sizeof(double));
        char *live = (char *)calloc((size_t)cap, 1);
        double *re_out = (double *)bre.buf;
        int64_t *lo_out = (int64_t *)blo.buf, *hi_out = (int64_t *)bhi.buf;
        if (!c.slab || !c.rowsum || !c.cum || !blo_ || !bhi_ || !bre_ || !live) {
            PyErr_NoMemory();
        } else {
            int64_t t = 0;
            Py_BEGIN_ALLOW_THREADS
            double mean = 0.0, re0 = 0.0;
            if (n > 0) {
                /* NumPy: np.abs(v - v.mean()).sum() */
                for (int64_t i = 0; i < n; i++) mean += c.v[i];
                mean /= (double)n;
                for (int64_t i = 0; i < n; i++) re0 += fabs(c.v[i] - mean);
            }
            for (int d = 0; d < k; d++) { blo_[d] = 0; bhi_[d] = shape[d]; }
            bre_[0] = re0;
            live[0] = 1;
            int64_t count = 1, parts = 1;
            re_out[0] = re0;
            while (parts < max_parts) {
                int axis = -1;
                int64_t b = -1;
                for (int j = 0; j < k && b < 0; j++) {
                    int a = (int)((t + j) % k);
                    double bestre = -INFINITY;
                    for (int64_t i = 0; i < count; i++) {
                        if (!live[i] || bhi_[i * k + a] - blo_[i * k + a] < 2) continue;
                        double q = round9(bre_[i]); /* ties (to 9 decimals): the oldest */
                        if (b < 0 || q > bestre) { b = i; bestre = q; }
                    }
                    if (b >= 0) axis = a;
                }
                if (b < 0) break;
                int64_t s;
                double rl, rr;
                best_split(&c, blo_ + b * k, bhi_ + b * k, axis, bre_[b], &s, &rl, &rr);
                int64_t cut = blo_[b * k + axis] + s, L = count, R = count + 1;
                for (int d = 0; d < k; d++) {
                    blo_[L * k + d] = blo_[R * k + d] = blo_[b * k + d];
                    bhi_[L * k + d] = bhi_[R * k + d] = bhi_[b * k + d];
                }
                bhi_[L * k + axis] = cut;
                blo_[R * k + axis] = cut;
                bre_[L] = rl;
                bre_[R] = rr;
                live[b] = 0;
                live[L] = live[R] = 1;
                count += 2;
                for (int d = 0; d < k; d++) {
                    lo_out[t * k + d] = blo_[R * k + d];
                    hi_out[t * k + d] = bhi_[R * k + d];
                }
                double tot = 0.0;
                for (int64_t i = 0; i < count; i++) if (live[i]) tot += bre_[i];
                t++;
                parts++;
                re_out[t] = tot;
            }
            Py_END_ALLOW_THREADS
            result = PyLong_FromLongLong((long long)t);
        }
        free(c.slab); free(c.rowsum); free(c.cum);
        free(blo_); free(bhi_); free(bre_); free(live);
    }
done:
    PyBuffer_Release(&bv); PyBuffer_Release(&bs); PyBuffer_Release(&bre); PyBuffer_Release(&blo); PyBuffer_Release(&bhi);
    return result;
}

static PyMethodDef methods[] = {
    {"split_path", split_path, METH_VARARGS, "Alg. 4 split path (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "splitpath", "Alg. 4 split paths in C.", -1, methods};

PyMODINIT_FUNC PyInit_splitpath(void) { return PyModule_Create(&module); }
