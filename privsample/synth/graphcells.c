/* privsample.synth.selection.graph_cells in C: the cells of the junction tree mbi builds for a clique
 * graph (greedy elimination, maximal elimination cliques; a tree's edges when the graph is a tree).
 *
 * Same algorithm and tie-breaks as the Python version (which stays the reference and the fallback):
 * AIM's and PPSyn's size filter asks for one such size per candidate per round, and the Python loops
 * were a tenth of PPSyn-DP's fit on Adult. Public input only (the domain and the model's cliques).
 *
 * graph_cells(sizes, nbr, covered) -> int, or -1 when the junction tree has more than INT64_MAX cells
 * (or a size is below 1; the caller then uses Python's exact integers). sizes: sequence of ints; nbr:
 * sequence of neighbour bit masks (Python ints, any number of attributes up to MAXA); covered: bit mask of
 * the attributes in some clique. Masks are held as arrays of W 64-bit words.
 *
 * The cells of an elimination candidate saturate (TOO_BIG, above every product that fits in 63 bits)
 * instead of overflowing: a saturated candidate never wins the minimum against one that fits, and the
 * minimum is compared exactly otherwise, so the order is the Python version's. When every candidate
 * saturates, the chosen elimination clique has more than INT64_MAX cells, and so has the tree (every
 * size is at least 1, so the maximal clique that holds it has at least as many): -1 at once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXA 4096

static int W; /* words per mask */

#define BIT(m, i) ((m)[(i) >> 6] >> ((i) & 63) & 1)
#define SET(m, i) ((m)[(i) >> 6] |= 1ULL << ((i) & 63))
#define CLR(m, i) ((m)[(i) >> 6] &= ~(1ULL << ((i) & 63)))

#define TOO_BIG UINT64_MAX /* more than INT64_MAX cells */

/* the cells of mask (sizes at least 1), or TOO_BIG when above INT64_MAX; stops at bound when the product
 * reaches it (then the result is at least bound: the product only grows) */
static uint64_t cells(const uint64_t *mask, const int64_t *size, uint64_t bound) {
    int64_t out = 1;
    for (int w = 0; w < W; w++) {
        uint64_t m = mask[w];
        while (m) {
            int i = w * 64 + __builtin_ctzll(m);
            if (__builtin_mul_overflow(out, size[i], &out)) return TOO_BIG;
            if ((uint64_t)out >= bound) return (uint64_t)out;
            m &= m - 1;
        }
    }
    return (uint64_t)out;
}

static int popcount(const uint64_t *m) {
    int c = 0;
    for (int w = 0; w < W; w++) c += __builtin_popcountll(m[w]);
    return c;
}

static int connected(uint64_t *nbr, int n, int *todo, uint64_t *seen) {
    memset(seen, 0, W * sizeof(uint64_t));
    int top = 0;
    SET(seen, 0);
    todo[top++] = 0;
    while (top) {
        int i = todo[--top];
        const uint64_t *ni = nbr + (size_t)i * W;
        for (int w = 0; w < W; w++) {
            uint64_t fresh = ni[w] & ~seen[w];
            seen[w] |= fresh;
            while (fresh) {
                todo[top++] = w * 64 + __builtin_ctzll(fresh);
                fresh &= fresh - 1;
            }
        }
    }
    return popcount(seen) == n;
}

/* the low W words of a Python int, into out */
static int to_words(PyObject *v, uint64_t *out) {
    Py_INCREF(v);
    PyObject *shift = PyLong_FromLong(64);
    if (!shift) { Py_DECREF(v); return -1; }
    for (int w = 0; w < W; w++) {
        out[w] = PyLong_AsUnsignedLongLongMask(v);
        if (PyErr_Occurred()) { Py_DECREF(v); Py_DECREF(shift); return -1; }
        if (w + 1 < W) {
            PyObject *next = PyNumber_Rshift(v, shift);
            Py_DECREF(v);
            if (!next) { Py_DECREF(shift); return -1; }
            v = next;
        }
    }
    Py_DECREF(v);
    Py_DECREF(shift);
    return 0;
}

static PyObject *graph_cells(PyObject *self, PyObject *args) {
    PyObject *osize, *onbr, *ocov;
    int greedy_only = 0;
    if (!PyArg_ParseTuple(args, "OOO|p", &osize, &onbr, &ocov, &greedy_only)) return NULL;
    Py_ssize_t n = PySequence_Length(osize);
    if (n < 0 || n > MAXA || PySequence_Length(onbr) != n) {
        PyErr_SetString(PyExc_ValueError, "graph_cells: at most 4096 attributes, one mask each");
        return NULL;
    }
    W = n ? (int)((n + 63) / 64) : 1;
    int64_t *size = malloc(sizeof(int64_t) * (n ? n : 1));
    uint64_t *nbr = calloc((size_t)(n ? n : 1) * W, sizeof(uint64_t));
    uint64_t *elim = calloc((size_t)(n ? n : 1) * W, sizeof(uint64_t));
    uint64_t *maximal = calloc((size_t)(n ? n : 1) * W, sizeof(uint64_t));
    uint64_t *covered = calloc(W, sizeof(uint64_t)), *tmp = calloc(W, sizeof(uint64_t));
    int *unmarked = malloc(sizeof(int) * (n ? n : 1)), *order = malloc(sizeof(int) * (n ? n : 1));
    PyObject *result = NULL;
    int nonpositive = 0;
    if (!size || !nbr || !elim || !maximal || !covered || !tmp || !unmarked || !order) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PySequence_GetItem(osize, i), *m = PySequence_GetItem(onbr, i);
        if (!s || !m) { Py_XDECREF(s); Py_XDECREF(m); goto done; }
        size[i] = PyLong_AsLongLong(s);
        int bad = to_words(m, nbr + (size_t)i * W);
        Py_DECREF(s); Py_DECREF(m);
        if (bad || PyErr_Occurred()) goto done;
        if (size[i] < 1) nonpositive = 1;
    }
    if (to_words(ocov, covered)) goto done;
    if (nonpositive) { /* products no longer grow with the clique: Python's exact integers */
        result = PyLong_FromLong(-1);
        goto done;
    }
    int overflow = 0;
    int64_t total = 0;
    int64_t n_edges = 0;
    for (int i = 0; i < n; i++) n_edges += popcount(nbr + (size_t)i * W);
    n_edges /= 2;
    if (!greedy_only && n_edges && n_edges == n - 1 && connected(nbr, (int)n, unmarked, tmp)) {
        /* a tree: its edges are the cliques */
        for (int x = 0; x < n; x++)
            for (int y = x + 1; y < n; y++)
                if (BIT(nbr + (size_t)x * W, y)) {
                    int64_t c;
                    if (__builtin_mul_overflow(size[x], size[y], &c) || __builtin_add_overflow(total, c, &total))
                        overflow = 1;
                }
        result = PyLong_FromLongLong(overflow ? -1 : total);
        goto done;
    }
    int left = (int)n;
    for (int i = 0; i < n; i++) unmarked[i] = i;
    for (int step = 0; step < n; step++) {
        int best = 0;
        uint64_t bestkey = TOO_BIG;
        for (int u = 0; u < left; u++) { /* the first minimum, in domain order (unmarked stays sorted) */
            int i = unmarked[u];
            uint64_t key = 1;
            if (BIT(covered, i)) {
                memcpy(tmp, nbr + (size_t)i * W, W * sizeof(uint64_t));
                SET(tmp, i);
                key = cells(tmp, size, u == 0 ? TOO_BIG : bestkey); /* exact when below bestkey */
            }
            if (u == 0 || key < bestkey) { best = u; bestkey = key; }
        }
        if (bestkey == TOO_BIG) { /* every candidate saturates: so does the tree */
            result = PyLong_FromLong(-1);
            goto done;
        }
        int a = unmarked[best];
        for (int u = best; u < left - 1; u++) unmarked[u] = unmarked[u + 1];
        left--;
        uint64_t *na = nbr + (size_t)a * W, *e = elim + (size_t)step * W;
        memcpy(e, na, W * sizeof(uint64_t));
        SET(e, a);
        for (int w = 0; w < W; w++) { /* fill in: a's neighbours become a clique; a leaves the graph */
            uint64_t rest = na[w];
            while (rest) {
                int j = w * 64 + __builtin_ctzll(rest);
                uint64_t *nj = nbr + (size_t)j * W;
                for (int v = 0; v < W; v++) nj[v] |= na[v];
                CLR(nj, j);
                CLR(nj, a);
                rest &= rest - 1;
            }
        }
    }
    /* stable sort by size (bits) descending, as Python's sorted(key=-bit_count) */
    int *bits = unmarked; /* reused */
    for (int i = 0; i < n; i++) { order[i] = i; bits[i] = popcount(elim + (size_t)i * W); }
    for (int i = 1; i < n; i++) {
        int o = order[i], j = i - 1;
        while (j >= 0 && bits[order[j]] < bits[o]) { order[j + 1] = order[j]; j--; }
        order[j + 1] = o;
    }
    int nm = 0;
    for (int i = 0; i < n; i++) {
        const uint64_t *m = elim + (size_t)order[i] * W;
        int inside = 0;
        for (int k = 0; k < nm && !inside; k++) {
            const uint64_t *mk = maximal + (size_t)k * W;
            inside = 1;
            for (int w = 0; w < W && inside; w++) inside = (m[w] & mk[w]) == m[w];
        }
        if (!inside) memcpy(maximal + (size_t)(nm++) * W, m, W * sizeof(uint64_t));
    }
    for (int k = 0; k < nm; k++) {
        uint64_t c = cells(maximal + (size_t)k * W, size, TOO_BIG);
        if (c == TOO_BIG || __builtin_add_overflow(total, (int64_t)c, &total)) overflow = 1;
    }
    result = PyLong_FromLongLong(overflow ? -1 : total);
done:
    free(size); free(nbr); free(elim); free(maximal); free(covered); free(tmp); free(unmarked); free(order);
    return result;
}

static PyMethodDef methods[] = {
    {"graph_cells", graph_cells, METH_VARARGS,
     "Junction-tree cells of a clique graph (see the module source); greedy_only skips the tree case."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "graphcells", "Junction-tree sizes in C.", -1, methods};

PyMODINIT_FUNC PyInit_graphcells(void) { return PyModule_Create(&module); }
