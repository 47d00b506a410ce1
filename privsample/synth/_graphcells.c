/* privsample.synth.selection.graph_cells in C: the cells of the junction tree mbi builds for a clique
 * graph (greedy elimination, maximal elimination cliques; a tree's edges when the graph is a tree).
 *
 * Same algorithm and tie-breaks as the Python version (which stays the reference and the fallback):
 * AIM's and PPSyn's size filter asks for one such size per candidate per round, and the Python loops
 * were a tenth of PPSyn-DP's fit on Adult. Public input only (the domain and the model's cliques).
 *
 * graph_cells(sizes, nbr, covered) -> int, or -1 when a product does not fit in 63 bits (then the
 * caller uses Python's exact integers). sizes: sequence of ints; nbr: sequence of neighbour bit masks
 * (at most 64 attributes); covered: bit mask of the attributes in some clique.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define MAXA 64

static int overflow;

static int64_t cells(uint64_t mask, const int64_t *size) {
    int64_t out = 1;
    while (mask) {
        int i = __builtin_ctzll(mask);
        if (__builtin_mul_overflow(out, size[i], &out)) { overflow = 1; return INT64_MAX; }
        mask &= mask - 1;
    }
    return out;
}

static int connected(const uint64_t *nbr, int n) {
    uint64_t seen = 1;
    int todo[MAXA], top = 0;
    todo[top++] = 0;
    while (top) {
        int i = todo[--top];
        uint64_t fresh = nbr[i] & ~seen;
        seen |= fresh;
        while (fresh) {
            todo[top++] = __builtin_ctzll(fresh);
            fresh &= fresh - 1;
        }
    }
    return seen == (n == 64 ? ~0ULL : ((1ULL << n) - 1));
}

static PyObject *graph_cells(PyObject *self, PyObject *args) {
    PyObject *osize, *onbr, *ocov;
    if (!PyArg_ParseTuple(args, "OOO", &osize, &onbr, &ocov)) return NULL;
    Py_ssize_t n = PySequence_Length(osize);
    if (n < 0 || n > MAXA || PySequence_Length(onbr) != n) {
        PyErr_SetString(PyExc_ValueError, "graph_cells: at most 64 attributes, one mask each");
        return NULL;
    }
    int64_t size[MAXA];
    uint64_t nbr[MAXA];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PySequence_GetItem(osize, i), *m = PySequence_GetItem(onbr, i);
        if (!s || !m) { Py_XDECREF(s); Py_XDECREF(m); return NULL; }
        size[i] = PyLong_AsLongLong(s);
        nbr[i] = PyLong_AsUnsignedLongLongMask(m);
        Py_DECREF(s); Py_DECREF(m);
        if (PyErr_Occurred()) return NULL;
    }
    uint64_t covered = PyLong_AsUnsignedLongLongMask(ocov);
    if (PyErr_Occurred()) return NULL;
    overflow = 0;
    int64_t total = 0;
    int64_t n_edges = 0;
    for (int i = 0; i < n; i++) n_edges += __builtin_popcountll(nbr[i]);
    n_edges /= 2;
    if (n_edges && n_edges == n - 1 && connected(nbr, (int)n)) { /* a tree: its edges are the cliques */
        for (int x = 0; x < n; x++)
            for (int y = x + 1; y < n; y++)
                if (nbr[x] >> y & 1) {
                    int64_t c;
                    if (__builtin_mul_overflow(size[x], size[y], &c) || __builtin_add_overflow(total, c, &total))
                        overflow = 1;
                }
        return PyLong_FromLongLong(overflow ? -1 : total);
    }
    int unmarked[MAXA], left = (int)n;
    for (int i = 0; i < n; i++) unmarked[i] = i;
    uint64_t elim[MAXA];
    for (int step = 0; step < n; step++) {
        int best = 0;
        int64_t bestkey = 0;
        for (int u = 0; u < left; u++) { /* the first minimum, in domain order (unmarked stays sorted) */
            int i = unmarked[u];
            int64_t key = (covered >> i & 1) ? cells(nbr[i] | (1ULL << i), size) : 1;
            if (u == 0 || key < bestkey) { best = u; bestkey = key; }
        }
        int a = unmarked[best];
        for (int u = best; u < left - 1; u++) unmarked[u] = unmarked[u + 1];
        left--;
        elim[step] = nbr[a] | (1ULL << a);
        uint64_t rest = nbr[a];
        while (rest) { /* fill in: a's neighbours become a clique; a leaves the graph */
            int j = __builtin_ctzll(rest);
            nbr[j] = (nbr[j] | nbr[a]) & ~(1ULL << j) & ~(1ULL << a);
            rest &= rest - 1;
        }
    }
    /* stable sort by size (bits) descending, as Python's sorted(key=-bit_count) */
    for (int i = 1; i < n; i++) {
        uint64_t m = elim[i];
        int j = i - 1;
        while (j >= 0 && __builtin_popcountll(elim[j]) < __builtin_popcountll(m)) { elim[j + 1] = elim[j]; j--; }
        elim[j + 1] = m;
    }
    uint64_t maximal[MAXA];
    int nm = 0;
    for (int i = 0; i < n; i++) {
        int inside = 0;
        for (int k = 0; k < nm && !inside; k++) inside = (elim[i] & maximal[k]) == elim[i];
        if (!inside) maximal[nm++] = elim[i];
    }
    for (int k = 0; k < nm; k++) {
        int64_t c = cells(maximal[k], size);
        if (__builtin_add_overflow(total, c, &total)) overflow = 1;
    }
    return PyLong_FromLongLong(overflow ? -1 : total);
}

static PyMethodDef methods[] = {
    {"graph_cells", graph_cells, METH_VARARGS, "Junction-tree cells of a clique graph (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_graphcells", "Junction-tree sizes in C.", -1, methods};

PyMODINIT_FUNC PyInit__graphcells(void) { return PyModule_Create(&module); }
