/*
 * bmi.c - S5's BMI eigenvalue problem for `tenbin bnb bmi FILE`: minimise
 * the largest eigenvalue of
 *
 *     F(x, y) = F00 + sum_i x_i Fi0 + sum_j y_j F0j + sum_ij x_i y_j Fij
 *
 * (symmetric m x m matrices) over a box of x (nx) and y (ny).  Input is
 * JSON: {"m", "nx", "ny", "F00": [[...]], "Fx": [F10, ...], "Fy": [F01, ...],
 * "Fxy": [[F11, ..., F1ny], ...], "x": [[lo, hi], ...], "y": [[lo, hi], ...]}.
 *
 * A subproblem is a box (nx + ny pairs of doubles).  Branch: bisect the
 * side that is longest relative to its side in the whole box.  Evaluate:
 * the box's centre (c, d), a feasible point, worth lambda_max(F(c, d)).
 *
 * Bound, two valid lower bounds of lambda_max(F(x, y)) over the box, the
 * larger taken (both tend to lambda_max(F(c, d)) as the box shrinks):
 *
 * 1. Weyl.  F(x, y) = F(c, d) + B with B = sum_i (x_i - c_i) Fi0 +
 *    sum_j (y_j - d_j) F0j + sum_ij (x_i y_j - c_i d_j) Fij, and
 *    lambda_max(A + B) >= lambda_max(A) + lambda_min(B) >= lambda_max(A) - ||B||
 *    (Weyl's inequality; ||.|| the spectral norm).  By the triangle
 *    inequality ||B|| <= sum_i r_i ||Fi0|| + sum_j s_j ||F0j|| +
 *    sum_ij (r_i s_j + |c_i| s_j + |d_j| r_i) ||Fij||, with r, s the
 *    half-widths, since x_i y_j - c_i d_j = (x_i - c_i)(y_j - d_j) +
 *    c_i (y_j - d_j) + d_j (x_i - c_i).
 * 2. Rayleigh.  For the unit top eigenvector v of F(c, d) and any (x, y),
 *    lambda_max(F(x, y)) = max_|u|=1 u'F(x, y)u >= v'F(x, y)v = q(x, y),
 *    a bilinear function of (x, y).  For fixed y, q is affine in x, so its
 *    minimum over the x-box takes each x_i at an end (by the sign of its
 *    coefficient); that minimum is a minimum of affine functions of y,
 *    concave, so its minimum over the y-box is at a vertex.  Enumerating
 *    the 2^k vertices of the smaller of the two (k <= 16) gives
 *    min over the box of q exactly, a lower bound of the problem there.
 *
 * Eigenvalues with LAPACKE_dsyevr (the largest one and its vector).
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problems.h"

typedef struct bmi {
    int m, nx, ny;
    double *F;       /* (nx+1)(ny+1) matrices of m*m, F[(i*(ny+1)+j)*m*m], i over x, j over y */
    double *rho;     /* their spectral norms */
    double *lo, *hi; /* the whole box: nx + ny */
    double *A, *w, *z, *work, *c;
    lapack_int *isuppz;
} bmi;

static const double *mat(const bmi *B, int i, int j)
{
    return B->F + ((size_t)i * (size_t)(B->ny + 1) + (size_t)j) * (size_t)B->m * (size_t)B->m;
}

/* Largest eigenvalue of the symmetric A (destroyed), and its vector into z. */
static int lambda_max(bmi *B, double *A, double *lam, double *z)
{
    lapack_int found = 0, m = B->m;
    lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, z ? 'V' : 'N', 'I', 'U', m, A, m, 0, 0, m,
                                     m, 0.0, &found, B->w, z ? z : B->z, 1, B->isuppz);
    if (info != 0 || found != 1)
        return TB_ERR_RANGE;
    *lam = B->w[0];
    return TB_OK;
}

/* F at (x, y) into B->A. */
static void f_at(bmi *B, const double *x, const double *y)
{
    size_t mm = (size_t)B->m * (size_t)B->m;
    memcpy(B->A, mat(B, 0, 0), mm * sizeof *B->A);
    for (int i = 0; i <= B->nx; i++)
        for (int j = 0; j <= B->ny; j++) {
            if (i == 0 && j == 0)
                continue;
            double t = (i ? x[i - 1] : 1.0) * (j ? y[j - 1] : 1.0);
            if (t == 0)
                continue;
            const double *M = mat(B, i, j);
            for (size_t k = 0; k < mm; k++)
                B->A[k] += t * M[k];
        }
}

static int check_len(const bmi *B, size_t len)
{
    return len == (size_t)(B->nx + B->ny) * 16 ? TB_OK : TB_ERR_PARSE;
}

static int b_root(void *ctx, tb_buf *sub)
{
    bmi *B = ctx;
    for (int k = 0; k < B->nx + B->ny; k++) {
        TB_CHECK(tb_buf_pack_f64(sub, B->lo[k]));
        TB_CHECK(tb_buf_pack_f64(sub, B->hi[k]));
    }
    return TB_OK;
}

static void box_of(const bmi *B, const void *s, double *lo, double *hi)
{
    const unsigned char *p = s;
    for (int k = 0; k < B->nx + B->ny; k++) {
        memcpy(&lo[k], p + 16 * (size_t)k, 8);
        memcpy(&hi[k], p + 16 * (size_t)k + 8, 8);
    }
}

/* min over the box of v'F(x, y)v, with the coefficients q[i][j] = v'Fij v. */
static double rayleigh_min(const bmi *B, const double *q, const double *lo, const double *hi)
{
    int nx = B->nx, ny = B->ny;
    /* enumerate the vertices of the smaller side; the other side's
     * coordinates each go to their best end */
    int enum_y = ny <= nx;
    int k = enum_y ? ny : nx, other = enum_y ? nx : ny;
    if (k > 16)
        return -INFINITY;
#define Q(i, j) q[(size_t)(i) * (size_t)(ny + 1) + (size_t)(j)]
    double best = INFINITY;
    for (unsigned long bits = 0; bits < (1ul << k); bits++) {
        double val = Q(0, 0);
        /* the enumerated coordinates */
        double t[64];
        for (int e = 0; e < k; e++) {
            int idx = enum_y ? nx + e : e;
            t[e] = (bits >> e) & 1 ? hi[idx] : lo[idx];
            val += enum_y ? Q(0, e + 1) * t[e] : Q(e + 1, 0) * t[e];
        }
        for (int o = 0; o < other; o++) {
            double coef = enum_y ? Q(o + 1, 0) : Q(0, o + 1);
            for (int e = 0; e < k; e++)
                coef += (enum_y ? Q(o + 1, e + 1) : Q(e + 1, o + 1)) * t[e];
            int idx = enum_y ? o : nx + o;
            val += coef >= 0 ? coef * lo[idx] : coef * hi[idx];
        }
        if (val < best)
            best = val;
    }
#undef Q
    return best;
}

static int b_bound(void *ctx, const void *s, size_t len, double *bound)
{
    bmi *B = ctx;
    TB_CHECK(check_len(B, len));
    int nx = B->nx, ny = B->ny, m = B->m;
    double lo[128], hi[128], c[128], r[128];
    box_of(B, s, lo, hi);
    for (int k = 0; k < nx + ny; k++) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        r[k] = 0.5 * (hi[k] - lo[k]);
    }
    f_at(B, c, c + nx);
    double lam;
    TB_CHECK(lambda_max(B, B->A, &lam, B->z));
    /* 1. Weyl */
    double norm = 0;
    for (int i = 1; i <= nx; i++)
        norm += r[i - 1] * B->rho[(size_t)i * (size_t)(ny + 1)];
    for (int j = 1; j <= ny; j++)
        norm += r[nx + j - 1] * B->rho[j];
    for (int i = 1; i <= nx; i++)
        for (int j = 1; j <= ny; j++) {
            double ri = r[i - 1], sj = r[nx + j - 1];
            norm += (ri * sj + fabs(c[i - 1]) * sj + fabs(c[nx + j - 1]) * ri) *
                    B->rho[(size_t)i * (size_t)(ny + 1) + (size_t)j];
        }
    double lb = lam - norm;
    /* 2. Rayleigh with the top eigenvector */
    double *q = B->c;
    for (int i = 0; i <= nx; i++)
        for (int j = 0; j <= ny; j++) {
            const double *M = mat(B, i, j);
            double acc = 0;
            for (int a = 0; a < m; a++) {
                double row = 0;
                for (int b = 0; b < m; b++)
                    row += M[(size_t)a * (size_t)m + (size_t)b] * B->z[b];
                acc += B->z[a] * row;
            }
            q[(size_t)i * (size_t)(ny + 1) + (size_t)j] = acc;
        }
    double lb2 = rayleigh_min(B, q, lo, hi);
    *bound = lb2 > lb ? lb2 : lb;
    return TB_OK;
}

static int b_evaluate(void *ctx, const void *s, size_t len, double *value, tb_buf *sol)
{
    bmi *B = ctx;
    TB_CHECK(check_len(B, len));
    double lo[128], hi[128], c[128];
    box_of(B, s, lo, hi);
    for (int k = 0; k < B->nx + B->ny; k++)
        c[k] = 0.5 * (lo[k] + hi[k]);
    f_at(B, c, c + B->nx);
    TB_CHECK(lambda_max(B, B->A, value, NULL));
    for (int k = 0; k < B->nx + B->ny; k++)
        TB_CHECK(tb_buf_pack_f64(sol, c[k]));
    return TB_OK;
}

/* Bisect box q (its bytes) along its widest side relative to the whole
 * box, as b_branch does: the halves in a and b; 0 if it is a point. */
static int bisect(const bmi *B, const unsigned char *q, size_t len, unsigned char *a,
                  unsigned char *b)
{
    int n = B->nx + B->ny, best = -1;
    double lo[128], hi[128], wbest = 0;
    box_of(B, q, lo, hi);
    for (int k = 0; k < n; k++) {
        double w = (hi[k] - lo[k]) / (B->hi[k] - B->lo[k]);
        if (w > wbest) {
            wbest = w;
            best = k;
        }
    }
    if (best < 0 || wbest < 1e-12)
        return 0;
    double mid = 0.5 * (lo[best] + hi[best]);
    memmove(a, q, len);
    memcpy(b, a, len);
    memcpy(a + 16 * (size_t)best + 8, &mid, 8); /* [lo, mid] */
    memcpy(b + 16 * (size_t)best, &mid, 8);     /* [mid, hi] */
    return 1;
}

static int b_branch(void *ctx, const void *s, size_t len, tb_bnb_children *kids)
{
    bmi *B = ctx;
    TB_CHECK(check_len(B, len));
    unsigned char lo[128 * 16], hi[128 * 16];
    if (!bisect(B, s, len, lo, hi)) /* a point, for all purposes */
        return TB_OK;
    TB_CHECK(tb_bnb_child(kids, lo, len, NAN));
    return tb_bnb_child(kids, hi, len, NAN);
}

static const tb_bnb_ops bmi_ops;

/* The start-up's split: b_branch breadth first (a box cut along several
 * sides at once).  No bound is computed (each costs an eigenvalue problem):
 * the boxes keep the parent's. */
static int b_split(void *ctx, const void *s, size_t len, int ways, tb_bnb_children *kids)
{
    return tb_bnb_split_by_branch(&bmi_ops, ctx, s, len, ways, kids);
}

static const tb_bnb_ops bmi_ops = {sizeof(tb_bnb_ops), TB_BNB_MINIMIZE, b_root, b_bound, b_branch,
                                   b_evaluate, b_split};

/* ---- input -------------------------------------------------------------- */

static void b_destroy(void *ctx)
{
    bmi *B = ctx;
    if (!B)
        return;
    free(B->F);
    free(B->rho);
    free(B->lo);
    free(B->hi);
    free(B->A);
    free(B->w);
    free(B->z);
    free(B->work);
    free(B->c);
    free(B->isuppz);
    free(B);
}

static int read_matrix(const cJSON *j, int m, double *out, const char *path, const char *where,
                       char *err, size_t errlen)
{
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != m) {
        snprintf(err, errlen, "%s: %s: expected an array of %d rows", path, where, m);
        return TB_ERR_PARSE;
    }
    for (int a = 0; a < m; a++) {
        const cJSON *row = cJSON_GetArrayItem(j, a);
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != m) {
            snprintf(err, errlen, "%s: %s[%d]: expected a row of %d numbers", path, where, a, m);
            return TB_ERR_PARSE;
        }
        for (int b = 0; b < m; b++) {
            const cJSON *v = cJSON_GetArrayItem(row, b);
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
                snprintf(err, errlen, "%s: %s[%d][%d]: expected a number", path, where, a, b);
                return TB_ERR_PARSE;
            }
            out[(size_t)a * (size_t)m + (size_t)b] = v->valuedouble;
        }
    }
    for (int a = 0; a < m; a++)
        for (int b = a + 1; b < m; b++)
            if (out[(size_t)a * (size_t)m + (size_t)b] != out[(size_t)b * (size_t)m + (size_t)a]) {
                snprintf(err, errlen, "%s: %s: not symmetric ([%d][%d] != [%d][%d])", path, where,
                         a, b, b, a);
                return TB_ERR_PARSE;
            }
    return TB_OK;
}

/* j is an array of m rows of m values (the values are read_matrix's). */
static int check_shape(const cJSON *j, int m, const char *path, const char *where, char *err,
                       size_t errlen)
{
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != m) {
        snprintf(err, errlen, "%s: %s: expected an array of %d rows", path, where, m);
        return TB_ERR_PARSE;
    }
    int a = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, j) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != m) {
            snprintf(err, errlen, "%s: %s[%d]: expected a row of %d numbers", path, where, a, m);
            return TB_ERR_PARSE;
        }
        a++;
    }
    return TB_OK;
}

/* The shape of every matrix, checked before the matrices are allocated: a
 * file then gets no more memory than the numbers it holds (m = 1000 and
 * nx = ny = 60 in 30 bytes asked for 30 GB). */
static int check_shapes(const cJSON *root, int m, int nx, int ny, const char *path, char *err,
                        size_t errlen)
{
    const cJSON *fx = cJSON_GetObjectItemCaseSensitive(root, "Fx");
    const cJSON *fy = cJSON_GetObjectItemCaseSensitive(root, "Fy");
    const cJSON *fxy = cJSON_GetObjectItemCaseSensitive(root, "Fxy");
    const cJSON *v, *w;
    char where[64];
    int i = 0, j;
    TB_CHECK(check_shape(cJSON_GetObjectItemCaseSensitive(root, "F00"), m, path, "F00", err,
                         errlen));
    if (!cJSON_IsArray(fx) || cJSON_GetArraySize(fx) != nx) {
        snprintf(err, errlen, "%s: Fx: expected nx = %d matrices", path, nx);
        return TB_ERR_PARSE;
    }
    if (!cJSON_IsArray(fy) || cJSON_GetArraySize(fy) != ny) {
        snprintf(err, errlen, "%s: Fy: expected ny = %d matrices", path, ny);
        return TB_ERR_PARSE;
    }
    if (!cJSON_IsArray(fxy) || cJSON_GetArraySize(fxy) != nx) {
        snprintf(err, errlen, "%s: Fxy: expected nx = %d arrays of ny matrices", path, nx);
        return TB_ERR_PARSE;
    }
    cJSON_ArrayForEach(v, fx) {
        snprintf(where, sizeof where, "Fx[%d]", i++);
        TB_CHECK(check_shape(v, m, path, where, err, errlen));
    }
    i = 0;
    cJSON_ArrayForEach(v, fy) {
        snprintf(where, sizeof where, "Fy[%d]", i++);
        TB_CHECK(check_shape(v, m, path, where, err, errlen));
    }
    i = 0;
    cJSON_ArrayForEach(v, fxy) {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != ny) {
            snprintf(err, errlen, "%s: Fxy[%d]: expected ny = %d matrices", path, i, ny);
            return TB_ERR_PARSE;
        }
        j = 0;
        cJSON_ArrayForEach(w, v) {
            snprintf(where, sizeof where, "Fxy[%d][%d]", i, j++);
            TB_CHECK(check_shape(w, m, path, where, err, errlen));
        }
        i++;
    }
    return TB_OK;
}

static int read_int(const cJSON *root, const char *key, int lo, int hi, int *out, const char *path,
                    char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi) {
        snprintf(err, errlen, "%s: %s: expected an integer from %d to %d", path, key, lo, hi);
        return TB_ERR_PARSE;
    }
    *out = (int)v->valuedouble;
    return TB_OK;
}

static int read_box(const cJSON *root, const char *key, int n, double *lo, double *hi,
                    const char *path, char *err, size_t errlen)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsArray(b) || cJSON_GetArraySize(b) != n) {
        snprintf(err, errlen, "%s: %s: expected %d intervals [lo, hi]", path, key, n);
        return TB_ERR_PARSE;
    }
    for (int k = 0; k < n; k++) {
        const cJSON *iv = cJSON_GetArrayItem(b, k);
        const cJSON *a = cJSON_GetArrayItem(iv, 0), *c = cJSON_GetArrayItem(iv, 1);
        if (!cJSON_IsArray(iv) || cJSON_GetArraySize(iv) != 2 || !cJSON_IsNumber(a) ||
            !cJSON_IsNumber(c) || !isfinite(a->valuedouble) || !isfinite(c->valuedouble) ||
            !(a->valuedouble < c->valuedouble)) {
            snprintf(err, errlen, "%s: %s[%d]: expected [lo, hi] with lo < hi", path, key, k);
            return TB_ERR_PARSE;
        }
        lo[k] = a->valuedouble;
        hi[k] = c->valuedouble;
    }
    return TB_OK;
}

static int b_load(const char *path, void **out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    tb_buf text = TB_BUF_INIT;
    char chunk[65536];
    size_t got;
    int rc = TB_OK;
    while (rc == TB_OK && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
        rc = tb_buf_append(&text, chunk, got);
    fclose(f);
    if (rc == TB_OK)
        rc = tb_buf_append(&text, "", 1);
    if (rc != TB_OK) {
        tb_buf_free(&text);
        snprintf(err, errlen, "%s: out of memory", path);
        return rc;
    }
    cJSON *root = cJSON_Parse((const char *)text.data);
    if (!root) {
        /* the line of the error */
        const char *at = cJSON_GetErrorPtr();
        int line = 1;
        for (const char *p = (const char *)text.data; at && p < at && *p; p++)
            line += *p == '\n';
        snprintf(err, errlen, "%s:%d: not valid JSON", path, line);
        tb_buf_free(&text);
        return TB_ERR_PARSE;
    }
    tb_buf_free(&text);
    bmi *B = calloc(1, sizeof *B);
    rc = B ? TB_OK : TB_ERR_NOMEM;
    if (rc == TB_OK)
        rc = read_int(root, "m", 1, 1000, &B->m, path, err, errlen);
    if (rc == TB_OK)
        rc = read_int(root, "nx", 1, 60, &B->nx, path, err, errlen);
    if (rc == TB_OK)
        rc = read_int(root, "ny", 1, 60, &B->ny, path, err, errlen);
    if (rc == TB_OK && B->nx + B->ny > 120) {
        snprintf(err, errlen, "%s: nx + ny must be at most 120", path);
        rc = TB_ERR_PARSE;
    }
    if (rc == TB_OK)
        rc = check_shapes(root, B->m, B->nx, B->ny, path, err, errlen);
    size_t mm = 0, nmat = 0;
    if (rc == TB_OK) {
        mm = (size_t)B->m * (size_t)B->m;
        nmat = (size_t)(B->nx + 1) * (size_t)(B->ny + 1);
        B->F = calloc(nmat * mm, sizeof *B->F);
        B->rho = calloc(nmat, sizeof *B->rho);
        B->lo = calloc((size_t)(B->nx + B->ny), sizeof *B->lo);
        B->hi = calloc((size_t)(B->nx + B->ny), sizeof *B->hi);
        B->A = calloc(mm, sizeof *B->A);
        B->w = calloc((size_t)B->m, sizeof *B->w);
        B->z = calloc((size_t)B->m, sizeof *B->z);
        B->c = calloc(nmat, sizeof *B->c);
        B->isuppz = calloc(2 * (size_t)B->m, sizeof *B->isuppz);
        if (!B->F || !B->rho || !B->lo || !B->hi || !B->A || !B->w || !B->z || !B->c ||
            !B->isuppz) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = TB_ERR_NOMEM;
        }
    }
    if (rc == TB_OK)
        rc = read_matrix(cJSON_GetObjectItemCaseSensitive(root, "F00"), B->m, B->F, path, "F00",
                         err, errlen);
    /* the shapes are checked: the values are left */
    const cJSON *fx = cJSON_GetObjectItemCaseSensitive(root, "Fx");
    const cJSON *fy = cJSON_GetObjectItemCaseSensitive(root, "Fy");
    const cJSON *fxy = cJSON_GetObjectItemCaseSensitive(root, "Fxy");
    char where[64];
    for (int i = 1; rc == TB_OK && i <= B->nx; i++) {
        snprintf(where, sizeof where, "Fx[%d]", i - 1);
        rc = read_matrix(cJSON_GetArrayItem(fx, i - 1), B->m, (double *)mat(B, i, 0), path, where,
                         err, errlen);
    }
    for (int j = 1; rc == TB_OK && j <= B->ny; j++) {
        snprintf(where, sizeof where, "Fy[%d]", j - 1);
        rc = read_matrix(cJSON_GetArrayItem(fy, j - 1), B->m, (double *)mat(B, 0, j), path, where,
                         err, errlen);
    }
    for (int i = 1; rc == TB_OK && i <= B->nx; i++) {
        const cJSON *row = cJSON_GetArrayItem(fxy, i - 1);
        for (int j = 1; rc == TB_OK && j <= B->ny; j++) {
            snprintf(where, sizeof where, "Fxy[%d][%d]", i - 1, j - 1);
            rc = read_matrix(cJSON_GetArrayItem(row, j - 1), B->m, (double *)mat(B, i, j), path,
                             where, err, errlen);
        }
    }
    if (rc == TB_OK)
        rc = read_box(root, "x", B->nx, B->lo, B->hi, path, err, errlen);
    if (rc == TB_OK)
        rc = read_box(root, "y", B->ny, B->lo + B->nx, B->hi + B->nx, path, err, errlen);
    cJSON_Delete(root);
    /* spectral norms: the largest |eigenvalue| */
    for (size_t k = 0; rc == TB_OK && k < nmat; k++) {
        lapack_int found = 0, m = B->m;
        memcpy(B->A, B->F + k * mm, mm * sizeof *B->A);
        double *wall = malloc((size_t)B->m * sizeof *wall);
        if (!wall) {
            rc = TB_ERR_NOMEM;
            break;
        }
        lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'N', 'A', 'U', m, B->A, m, 0, 0, 0, 0,
                                         0.0, &found, wall, B->z, 1, B->isuppz);
        if (info != 0 || found != m) {
            snprintf(err, errlen, "%s: the eigenvalues of a matrix could not be computed", path);
            rc = TB_ERR_RANGE;
        } else {
            B->rho[k] = fmax(fabs(wall[0]), fabs(wall[m - 1]));
        }
        free(wall);
    }
    if (rc != TB_OK) {
        if (rc == TB_ERR_NOMEM && B)
            snprintf(err, errlen, "%s: out of memory", path);
        b_destroy(B);
        return rc;
    }
    *out = B;
    return TB_OK;
}

static int b_solution_json(void *ctx, const void *sol, size_t len, tb_buf *out)
{
    const bmi *B = ctx;
    if (len != (size_t)(B->nx + B->ny) * 8)
        return TB_ERR_PARSE;
    const unsigned char *p = sol;
    TB_CHECK(tb_buf_printf(out, "{\"x\": ["));
    for (int k = 0; k < B->nx + B->ny; k++) {
        double v;
        memcpy(&v, p + 8 * (size_t)k, 8);
        TB_CHECK(tb_buf_printf(out, "%s%.17g", k == 0 || k == B->nx ? "" : ", ", v));
        if (k == B->nx - 1)
            TB_CHECK(tb_buf_printf(out, "], \"y\": ["));
    }
    return tb_buf_printf(out, "]}");
}

static int b_check(void *ctx, const void *sol, size_t len, double value)
{
    bmi *B = ctx;
    if (len != (size_t)(B->nx + B->ny) * 8)
        return TB_ERR_PARSE;
    double xy[128];
    memcpy(xy, sol, len);
    for (int k = 0; k < B->nx + B->ny; k++)
        if (!(xy[k] >= B->lo[k] && xy[k] <= B->hi[k]))
            return TB_ERR_RANGE;
    f_at(B, xy, xy + B->nx);
    double lam;
    TB_CHECK(lambda_max(B, B->A, &lam, NULL));
    return lam == value ? TB_OK : TB_ERR_RANGE;
}

const tb_bnb_problem tb_bnb_bmi = {.name = "bmi",
                                   .ops = &bmi_ops,
                                   .load = b_load,
                                   .destroy = b_destroy,
                                   .solution_json = b_solution_json,
                                   .check = b_check,
                                   .default_gap = 1e-3,
                                   .solution_at_top = 1};

/* ---- generator ---------------------------------------------------------- */

static void print_matrix(FILE *out, const double *M, int m)
{
    fprintf(out, "[");
    for (int a = 0; a < m; a++) {
        fprintf(out, "%s[", a ? ",\n  " : "");
        for (int b = 0; b < m; b++)
            fprintf(out, "%s%.6f", b ? ", " : "", M[(size_t)a * (size_t)m + (size_t)b]);
        fprintf(out, "]");
    }
    fprintf(out, "]");
}

int tb_bnb_bmi_generate(FILE *out, int m, int nx, int ny, uint64_t seed)
{
    tb_rng r;
    tb_rng_seed(&r, seed);
    size_t mm = (size_t)m * (size_t)m, nmat = (size_t)(nx + 1) * (size_t)(ny + 1);
    double *F = malloc(nmat * mm * sizeof *F);
    if (!F)
        return TB_ERR_NOMEM;
    /* symmetric matrices with entries uniform in [-1, 1], in (i, j) order */
    for (size_t k = 0; k < nmat; k++)
        for (int a = 0; a < m; a++)
            for (int b = a; b < m; b++)
                F[k * mm + (size_t)a * (size_t)m + (size_t)b] =
                    F[k * mm + (size_t)b * (size_t)m + (size_t)a] = tb_rng_uniform(&r, -1.0, 1.0);
#define AT(i, j) (F + ((size_t)(i) * (size_t)(ny + 1) + (size_t)(j)) * mm)
    fprintf(out, "{\"m\": %d, \"nx\": %d, \"ny\": %d,\n\"F00\": ", m, nx, ny);
    print_matrix(out, AT(0, 0), m);
    fprintf(out, ",\n\"Fx\": [");
    for (int i = 1; i <= nx; i++) {
        fprintf(out, "%s", i > 1 ? ",\n" : "");
        print_matrix(out, AT(i, 0), m);
    }
    fprintf(out, "],\n\"Fy\": [");
    for (int j = 1; j <= ny; j++) {
        fprintf(out, "%s", j > 1 ? ",\n" : "");
        print_matrix(out, AT(0, j), m);
    }
    fprintf(out, "],\n\"Fxy\": [");
    for (int i = 1; i <= nx; i++) {
        fprintf(out, "%s[", i > 1 ? ",\n" : "");
        for (int j = 1; j <= ny; j++) {
            fprintf(out, "%s", j > 1 ? ",\n" : "");
            print_matrix(out, AT(i, j), m);
        }
        fprintf(out, "]");
    }
#undef AT
    fprintf(out, "],\n\"x\": [");
    for (int i = 0; i < nx; i++)
        fprintf(out, "%s[-1, 1]", i ? ", " : "");
    fprintf(out, "],\n\"y\": [");
    for (int j = 0; j < ny; j++)
        fprintf(out, "%s[-1, 1]", j ? ", " : "");
    fprintf(out, "]}\n");
    free(F);
    return ferror(out) ? TB_ERR_IO : TB_OK;
}
