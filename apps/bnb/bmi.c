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
 * A subproblem is a box (nx + ny pairs of doubles).  Evaluate: the box's
 * centre (c, d), a feasible point, worth lambda_max(F(c, d)), and the
 * point of the semidefinite bound below, solved there, when it is better;
 * from the better one a short descent of lambda_max (descend).
 * Branch: none if that bound prunes the box; else the box less what range
 * reduction cuts off (reduce_box), bisected on the side whose products the
 * relaxation approximated worst (else the side longest relative to its
 * side in the whole box); each half reduced again, and bounded by the
 * cheap bounds and the parent's semidefinite minorant over the half.
 *
 * Bound, three valid lower bounds of lambda_max(F(x, y)) over the box, the
 * largest taken (all tend to lambda_max(F(c, d)) as the box shrinks; the
 * third, an LMI relaxation solved by DSDP, is far the strongest on wide
 * boxes and costs a semidefinite program, below):
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
#include <dsdp/dsdp5.h>
#include <dsdp/dsdpsys.h>
#include <stdarg.h>
#include <errno.h>
#include <float.h>
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
    double *dv; /* descend's eigenvectors: the point's, a trial's (2m) */
    lapack_int *isuppz;
    /* the semidefinite bound (sdp_bound) */
    int sdp;           /* used at all (TENBIN_BMI_BOUND, and the size) */
    int nv;            /* its variables: t, x, y, w = 1 + nx + ny + nx ny */
    int sdp_its;       /* most iterations of a solve (TENBIN_BMI_SDP_ITERATIONS) */
    double *packed;    /* -F00, then every other Fij, lower triangles by rows (DSDP's 'P') */
    int *ik, *rows;    /* the McCormick rows, by columns: c, then one column per variable */
    double *vals, *yv; /* their values; the solver's variables */
    double *X, *U, *ev; /* m x m: its matrix, the eigenvectors; m eigenvalues */
    unsigned char *last; /* node_sdp's cache: the box, its bound and cut */
    int have_last, last_var;
    double last_sb;
    double *last_q, last_margin; /* and its minorant tr(X F) (margin NAN: none) */
    uint64_t solves, failed, pruned, reduced;
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

/* A subproblem is its box: lo and hi of each of the nx + ny coordinates, 16
 * bytes each. */
static size_t box_len(const bmi *B) { return (size_t)(B->nx + B->ny) * 16; }

static int check_len(const bmi *B, size_t len) { return len == box_len(B) ? TB_OK : TB_ERR_PARSE; }

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

/* q[i][j] = v'Fij v for every matrix. */
static void quad_forms(const bmi *B, const double *v, double *q)
{
    int m = B->m;
    for (int i = 0; i <= B->nx; i++)
        for (int j = 0; j <= B->ny; j++) {
            const double *M = mat(B, i, j);
            double acc = 0;
            for (int a = 0; a < m; a++) {
                double row = 0;
                for (int b = 0; b < m; b++)
                    row += M[(size_t)a * (size_t)m + (size_t)b] * v[b];
                acc += v[a] * row;
            }
            q[(size_t)i * (size_t)(B->ny + 1) + (size_t)j] = acc;
        }
}

/* The eigenvalue bounds (1. and 2. above) of the box [lo, hi], and the top
 * eigenvalue at its centre in *lam_c. */
static int cheap_bound(bmi *B, const double *lo, const double *hi, double *bound, double *lam_c)
{
    int nx = B->nx, ny = B->ny;
    double c[128], r[128];
    for (int k = 0; k < nx + ny; k++) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        r[k] = 0.5 * (hi[k] - lo[k]);
    }
    f_at(B, c, c + nx);
    double lam;
    TB_CHECK(lambda_max(B, B->A, &lam, B->z));
    *lam_c = lam;
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
    quad_forms(B, B->z, B->c);
    double lb2 = rayleigh_min(B, B->c, lo, hi);
    *bound = lb2 > lb ? lb2 : lb;
    return TB_OK;
}

/*
 * DSDP's reporting, replaced.  libdsdp calls these four through its
 * procedure linkage table, so definitions in the program take their place
 * (ELF symbol interposition; where they do not, as in a static link, DSDP's
 * own run and nothing else changes).  Its error lines go to Tenbin's logger
 * at debug level (TENBIN_LOG=debug) instead of standard output, where they mixed
 * with a run's results; its per-event timing (two clock reads an event,
 * about 8 % of a solve here, reported only by DSDPEventLogSummary, which is
 * never called) is skipped.  What DSDP computes does not depend on either.
 */
void DSDPError(const char *func, int line, const char *file)
{
    TB_LOG_DEBUG("DSDP: error in %s (%s:%d)", func, file, line);
}

int DSDPFError(void *obj, const char *func, int line, const char *file, const char message[], ...)
{
    (void)obj;
    if (tb_log_get_level() < TB_LOG_DEBUG)
        return 0;
    char text[256];
    va_list ap;
    va_start(ap, message);
    vsnprintf(text, sizeof text, message, ap);
    va_end(ap);
    TB_LOG_DEBUG("DSDP: %s in %s (%s:%d)", text, func, file, line);
    return 0;
}

int DSDPEventLogBegin(int event)
{
    (void)event;
    return 0;
}

int DSDPEventLogEnd(int event)
{
    (void)event;
    return 0;
}

/*
 * 3. The semidefinite bound.  With w_ij standing for x_i y_j, bounded by
 * its McCormick envelope over the box (four linear inequalities each),
 *
 *     min t  s.t.  t I - F00 - sum x_i Fi0 - sum y_j F0j - sum w_ij Fij >= 0
 *
 * is a relaxation (every (x, y) of the box with w = xy is feasible, at
 * t = lambda_max(F(x, y))).  DSDP solves it; what is used of its answer is
 * the matrix X of the other side, which is positive semidefinite with
 * trace 1 at any accuracy of the solve: for every such X and every (x, y),
 * lambda_max(F(x, y)) >= tr(X F(x, y)), a bilinear function of (x, y)
 * whose exact minimum over the box rayleigh_min finds (2. is the case
 * X = vv').  So the bound is valid however far the solver stopped from the
 * optimum, and at the optimum it is at least the relaxation's value (the
 * box minimum of the bilinear function is above the envelope's).  X is
 * rebuilt from its eigenvectors with the negative eigenvalues dropped and
 * its trace made 1, so that it is semidefinite as computed; the rounding
 * of the sums is covered by a margin of m^2 eps times the largest value
 * the terms can take on the box.  A solve that fails leaves the eigenvalue
 * bounds, counted (sdp_failed).
 *
 * The solver sees the box mapped onto [-1, 1]^n (x = c + r u, y = d + s v):
 * F = G00 + sum u_i Gi0 + sum v_j G0j + sum u_i v_j Gij with G00 = F(c, d),
 * Gi0 = r_i (Fi0 + sum_j d_j Fij), G0j = s_j (F0j + sum_i c_i Fij),
 * Gij = r_i s_j Fij, all divided by their largest entry: the same
 * relaxation (the envelope is unchanged by an affine map of each
 * variable), as well scaled on a box of 1e-6 as on the whole, with
 * envelope rows that never change and a strictly feasible start (u = v =
 * w = 0, t above lambda_max(G00)), which halves the solver's iterations.
 *
 * The solve also says where to branch: the coordinate whose products the
 * envelope approximates worst at the relaxation's point, |w_ij - u_i v_j|
 * ||Gij|| summed over each coordinate's products; and the point, which
 * evaluate tries besides the centre.
 */
static int sdp_bound(bmi *B, const double *lo, const double *hi, double lam_c, double *bound,
                     int *var, double *pt, double *margin)
{
    int nx = B->nx, ny = B->ny, m = B->m, nv = B->nv, n = nx + ny;
    size_t np = (size_t)m * (size_t)(m + 1) / 2, nmat = (size_t)(nx + 1) * (size_t)(ny + 1);
    size_t mm = (size_t)m * (size_t)m;
    *bound = -INFINITY;
    *margin = NAN;
    *var = -1;
    B->solves++;
    double c[128], r[128];
    for (int k = 0; k < n; k++) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        r[k] = 0.5 * (hi[k] - lo[k]);
    }
    /* the G's, lower triangles by rows, G00 negated (DSDP's C) */
    double top = 0;
    for (size_t e = 0, a = 0; a < (size_t)m; a++)
        for (size_t b = 0; b <= a; b++, e++) {
            size_t ab = a * (size_t)m + b;
            double g00 = B->F[ab];
            for (int i = 1; i <= nx; i++) {
                double gi = mat(B, i, 0)[ab];
                for (int j = 1; j <= ny; j++)
                    gi += c[nx + j - 1] * mat(B, i, j)[ab];
                g00 += c[i - 1] * mat(B, i, 0)[ab];
                B->packed[(size_t)i * (size_t)(ny + 1) * np + e] = r[i - 1] * gi;
            }
            for (int j = 1; j <= ny; j++) {
                double gj = mat(B, 0, j)[ab];
                for (int i = 1; i <= nx; i++) {
                    gj += c[i - 1] * mat(B, i, j)[ab];
                    g00 += c[i - 1] * c[nx + j - 1] * mat(B, i, j)[ab];
                    B->packed[((size_t)i * (size_t)(ny + 1) + (size_t)j) * np + e] =
                        r[i - 1] * r[nx + j - 1] * mat(B, i, j)[ab];
                }
                g00 += c[nx + j - 1] * mat(B, 0, j)[ab];
                B->packed[(size_t)j * np + e] = r[nx + j - 1] * gj;
            }
            B->packed[e] = -g00;
        }
    for (size_t e = 0; e < nmat * np; e++)
        top = fmax(top, fabs(B->packed[e]));
    if (!(top > 0) || !isfinite(top)) { /* F constant on the box: 2. is exact */
        B->failed += !(top == 0);
        return TB_OK;
    }
    for (size_t e = 0; e < nmat * np; e++)
        B->packed[e] /= top;
    /* DSDP: maximise b'v s.t. C - sum v_k A_k >= 0 and the envelope's rows:
     * v = (t, u, v, w), b = -e_t, C = -G00, A_t = -I, A of u_i, v_j, w_ij =
     * Gi0, G0j, Gij */
    DSDP d = NULL;
    SDPCone sc = NULL;
    LPCone lc = NULL;
    int bad = DSDPCreate(nv, &d);
    if (!bad)
        bad = DSDPSetDualObjective(d, 1, -1.0) || DSDPCreateSDPCone(d, 1, &sc) ||
              SDPConeSetBlockSize(sc, 0, m) || SDPConeSetSparsity(sc, 0, nv + 1) ||
              SDPConeSetADenseVecMat(sc, 0, 0, m, 1.0, B->packed, (int)np) ||
              SDPConeSetIdentity(sc, 0, 1, m, -1.0);
    for (int i = 0; !bad && i <= nx; i++)
        for (int j = 0; !bad && j <= ny; j++) {
            if (i == 0 && j == 0)
                continue;
            int v = i == 0 ? 1 + nx + j : j == 0 ? 1 + i : 1 + nx + ny + (i - 1) * ny + j;
            size_t k = (size_t)i * (size_t)(ny + 1) + (size_t)j;
            bad = SDPConeSetADenseVecMat(sc, 0, v, m, 1.0, B->packed + k * np, (int)np);
        }
    /* the start: the centre (everything 0 but t) */
    if (!bad)
        bad = DSDPSetY0(d, 1, lam_c / top + 0.1 * (1.0 + fabs(lam_c / top))) ||
              DSDPSetR0(d, 0.0) || DSDPCreateLPCone(d, &lc) ||
              LPConeSetData(lc, 4 * nx * ny, B->ik, B->rows, B->vals) ||
              DSDPSetGapTolerance(d, 1e-4) || DSDPSetMaxIts(d, B->sdp_its) || DSDPSetup(d) ||
              DSDPSolve(d) || DSDPComputeX(d) || DSDPGetY(d, B->yv, nv);
    double *xa = NULL;
    int xn = 0;
    if (!bad)
        bad = SDPConeGetXArray(sc, 0, &xa, &xn) || xn != (int)np;
    if (!bad)
        for (int a = 0; a < m; a++)
            for (int b = 0; b <= a; b++)
                B->X[(size_t)a * (size_t)m + (size_t)b] = B->X[(size_t)b * (size_t)m + (size_t)a] =
                    xa[(size_t)a * (size_t)(a + 1) / 2 + (size_t)b];
    if (d)
        DSDPDestroy(d);
    /* X = sum_k p_k u_k u_k' / sum_k p_k |u_k|^2, p_k = max(eigenvalue, 0) */
    lapack_int found = 0;
    if (!bad)
        bad = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'A', 'U', m, B->X, m, 0, 0, 0, 0, 0.0, &found,
                             B->ev, B->U, m, B->isuppz) != 0 ||
              found != m;
    double tr = 0;
    for (int k = 0; !bad && k < m; k++) {
        B->ev[k] = B->ev[k] > 0 ? B->ev[k] : 0;
        for (int a = 0; a < m; a++)
            tr += B->ev[k] * B->U[(size_t)a * (size_t)m + (size_t)k] *
                  B->U[(size_t)a * (size_t)m + (size_t)k];
    }
    if (bad || !(tr > 0) || !isfinite(tr)) {
        B->failed++;
        return TB_OK;
    }
    for (int a = 0; a < m; a++)
        for (int b = 0; b <= a; b++) {
            double v = 0;
            for (int k = 0; k < m; k++)
                v += B->ev[k] * B->U[(size_t)a * (size_t)m + (size_t)k] *
                     B->U[(size_t)b * (size_t)m + (size_t)k];
            B->X[(size_t)a * (size_t)m + (size_t)b] = B->X[(size_t)b * (size_t)m + (size_t)a] =
                v / tr;
        }
    /* q_ij = tr(X Fij), and the largest a term can be on the box */
    double *q = B->c, scale = 0;
    for (size_t k = 0; k < nmat; k++) {
        const double *M = B->F + k * mm;
        double acc = 0;
        for (size_t e = 0; e < mm; e++)
            acc += B->X[e] * M[e];
        q[k] = acc;
        int i = (int)(k / (size_t)(ny + 1)), j = (int)(k % (size_t)(ny + 1));
        double big = B->rho[k];
        if (i)
            big *= fmax(fabs(lo[i - 1]), fabs(hi[i - 1]));
        if (j)
            big *= fmax(fabs(lo[nx + j - 1]), fabs(hi[nx + j - 1]));
        scale += big;
    }
    double lb = rayleigh_min(B, q, lo, hi) - (double)m * (double)m * DBL_EPSILON * scale;
    if (!isfinite(lb)) {
        B->failed++;
        return TB_OK;
    }
    *bound = lb;
    *margin = (double)m * (double)m * DBL_EPSILON * scale;
    /* the point, and where to branch */
    double score[128] = {0}, most = 0;
    for (int k = 0; k < n; k++) {
        double u = B->yv[1 + k];
        u = u >= -1.0 ? (u <= 1.0 ? u : 1.0) : -1.0; /* NAN: -1 */
        pt[k] = c[k] + r[k] * u;
        pt[k] = pt[k] >= lo[k] ? (pt[k] <= hi[k] ? pt[k] : hi[k]) : lo[k];
    }
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++) {
            double u = B->yv[1 + i], v = B->yv[1 + nx + j], w = B->yv[1 + n + i * ny + j];
            double e = fabs(w - u * v) * r[i] * r[nx + j] *
                       B->rho[(size_t)(i + 1) * (size_t)(ny + 1) + (size_t)(j + 1)];
            if (isfinite(e)) {
                score[i] += e;
                score[nx + j] += e;
            }
        }
    for (int k = 0; k < n; k++)
        if (score[k] > most) {
            most = score[k];
            *var = k;
        }
    return TB_OK;
}

static int b_bound(void *ctx, const void *s, size_t len, double *bound)
{
    bmi *B = ctx;
    TB_CHECK(check_len(B, len));
    double lo[128], hi[128], pt[128], lam_c, sb;
    int var;
    box_of(B, s, lo, hi);
    TB_CHECK(cheap_bound(B, lo, hi, bound, &lam_c));
    if (B->sdp) {
        double margin;
        TB_CHECK(sdp_bound(B, lo, hi, lam_c, &sb, &var, pt, &margin));
        if (sb > *bound)
            *bound = sb;
    }
    return TB_OK;
}

/* lambda_max(F(x, y)), (x, y) in xy. */
static int value_at(bmi *B, const double *xy, double *value)
{
    f_at(B, xy, xy + B->nx);
    return lambda_max(B, B->A, value, NULL);
}

/* Whether the box has a side of any width (a point needs no bound and has
 * no children). */
static int box_wide(const bmi *B, const double *lo, const double *hi)
{
    for (int k = 0; k < B->nx + B->ny; k++)
        if ((hi[k] - lo[k]) / (B->hi[k] - B->lo[k]) >= 1e-12)
            return 1;
    return 0;
}

/* The semidefinite bound of the box s (its bytes) and where to cut it,
 * from the one-box cache that evaluate fills for branch (the runtime calls
 * them one after the other on a subproblem it expands), else solved now
 * (lam_c: lambda_max at the centre, or NAN if not known yet).  The
 * relaxation's point into pt when solved now (NAN otherwise). */
static int node_sdp(bmi *B, const void *s, const double *lo, const double *hi, double lam_c,
                    double *sb, int *var, double *pt)
{
    size_t len = box_len(B);
    pt[0] = NAN;
    if (B->have_last && memcmp(B->last, s, len) == 0) {
        *sb = B->last_sb;
        *var = B->last_var;
        return TB_OK;
    }
    if (isnan(lam_c)) {
        double c[128] = {0};
        for (int k = 0; k < B->nx + B->ny; k++)
            c[k] = 0.5 * (lo[k] + hi[k]);
        TB_CHECK(value_at(B, c, &lam_c));
    }
    TB_CHECK(sdp_bound(B, lo, hi, lam_c, sb, var, pt, &B->last_margin));
    memcpy(B->last_q, B->c, (size_t)(B->nx + 1) * (size_t)(B->ny + 1) * sizeof *B->last_q);
    memcpy(B->last, s, len);
    B->last_sb = *sb;
    B->last_var = *var;
    B->have_last = 1;
    return TB_OK;
}

/*
 * A better incumbent: from the better of the centre and the relaxation's
 * point, a few steps down lambda_max inside the whole box.  Where the top
 * eigenvalue is simple its gradient is d/dx_i = v'(Fi0 + sum_j y_j Fij)v,
 * d/dy_j = v'(F0j + sum_i x_i Fij)v for its unit vector v; the step is
 * scaled by the node's half-widths, doubled after a step that lowers the
 * value and halved after one that does not (at a kink, where the top
 * eigenvalue is multiple, the steps shrink and it stops).  DESCENT_EVALS
 * eigenproblems at most, each of them a point whose value is exact.
 */
enum { DESCENT_EVALS = 16 };

static int descend(bmi *B, const double *r, double *xy, double *value)
{
    int nx = B->nx, ny = B->ny, n = nx + ny, m = B->m;
    double g[128], trial[128], lam, t = 0.5, *v = B->dv, *vt = B->dv + m;
    f_at(B, xy, xy + nx);
    TB_CHECK(lambda_max(B, B->A, &lam, v));
    double *q = B->c;
    for (int ev = 0; ev < DESCENT_EVALS && t > 1e-3;) {
        quad_forms(B, v, q);
#define Q(i, j) q[(size_t)(i) * (size_t)(ny + 1) + (size_t)(j)]
        double most = 0;
        for (int i = 1; i <= nx; i++) {
            g[i - 1] = Q(i, 0);
            for (int j = 1; j <= ny; j++)
                g[i - 1] += xy[nx + j - 1] * Q(i, j);
        }
        for (int j = 1; j <= ny; j++) {
            g[nx + j - 1] = Q(0, j);
            for (int i = 1; i <= nx; i++)
                g[nx + j - 1] += xy[i - 1] * Q(i, j);
        }
#undef Q
        for (int k = 0; k < n; k++)
            most = fmax(most, fabs(g[k]));
        if (!(most > 0) || !isfinite(most))
            break;
        for (;;) {
            int moved = 0;
            for (int k = 0; k < n; k++) {
                double p = xy[k] - t * r[k] * g[k] / most;
                trial[k] = p >= B->lo[k] ? (p <= B->hi[k] ? p : B->hi[k]) : B->lo[k];
                moved |= trial[k] != xy[k];
            }
            if (!moved)
                return TB_OK;
            double tv;
            f_at(B, trial, trial + nx);
            TB_CHECK(lambda_max(B, B->A, &tv, vt));
            ev++;
            if (tv < lam) {
                lam = tv;
                memcpy(xy, trial, (size_t)n * sizeof *xy);
                memcpy(v, vt, (size_t)m * sizeof *v);
                t *= 2;
                break;
            }
            t *= 0.5;
            if (ev >= DESCENT_EVALS || t <= 1e-3)
                break;
        }
    }
    /* the value as check computes it (eigenvalues only: the last bit may
     * differ from the eigenvector solve's) */
    double at;
    TB_CHECK(value_at(B, xy, &at));
    if (at < *value)
        *value = at;
    return TB_OK;
}

/* The centre, and where the semidefinite bound is used the relaxation's
 * point: the better of the two.  That bound is solved here, once per
 * expanded subproblem, for branch to use next: a subproblem gets only the
 * eigenvalue bounds when it is made (cheap, and enough to prune many), its
 * semidefinite one when it is expanded -- so none is solved for the
 * subproblems still queued when the search ends, or pruned first. */
static int b_evaluate(void *ctx, const void *s, size_t len, double *value, tb_buf *sol)
{
    bmi *B = ctx;
    TB_CHECK(check_len(B, len));
    int n = B->nx + B->ny;
    double lo[128], hi[128], c[128] = {0}, pt[128];
    box_of(B, s, lo, hi);
    for (int k = 0; k < n; k++)
        c[k] = 0.5 * (lo[k] + hi[k]);
    const double *best = c;
    TB_CHECK(value_at(B, c, value));
    if (B->sdp && box_wide(B, lo, hi)) {
        double sb, v;
        int var;
        B->have_last = 0;
        TB_CHECK(node_sdp(B, s, lo, hi, *value, &sb, &var, pt));
        if (!isnan(pt[0]) && value_at(B, pt, &v) == TB_OK && v < *value) {
            *value = v;
            best = pt;
        }
    }
    double xy[128], r[128];
    for (int k = 0; k < n; k++) {
        xy[k] = best[k];
        r[k] = 0.5 * (hi[k] - lo[k]);
    }
    if (B->sdp && box_wide(B, lo, hi)) {
        double before = *value;
        TB_CHECK(descend(B, r, xy, value));
        if (!(*value < before)) /* (a step that only seemed to lower it) */
            memcpy(xy, best, (size_t)n * sizeof *xy);
    }
    for (int k = 0; k < n; k++)
        TB_CHECK(tb_buf_pack_f64(sol, xy[k]));
    return TB_OK;
}

/* Cut the box of q in halves along coordinate `var`, or (var < 0, or a side
 * already a point) along its widest side relative to the whole box: the
 * two boxes in a and b; 0 if it is a point. */
static int bisect(const bmi *B, const unsigned char *q, int var, unsigned char *a,
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
    if (var >= 0 && (hi[var] - lo[var]) / (B->hi[var] - B->lo[var]) >= 1e-12)
        best = var;
    double mid = 0.5 * (lo[best] + hi[best]);
    size_t len = box_len(B);
    memmove(a, q, len);
    memcpy(b, a, len);
    memcpy(a + 16 * (size_t)best + 8, &mid, 8); /* [lo, mid] */
    memcpy(b + 16 * (size_t)best, &mid, 8);     /* [mid, hi] */
    return 1;
}

/*
 * Range reduction.  The semidefinite bound's minorant q(x, y) = tr(X F(x, y))
 * - margin is below lambda_max everywhere on the box; where it reaches the
 * cutoff, no solution better than the incumbent (less the gap) can be,
 * and that part of the box goes as a pruned subproblem would.  For each
 * coordinate k, h(s) = min of q over the box with its k-th side at s is a
 * minimum of functions affine in s, so concave: where it reaches the cutoff
 * at one end of the side, it does on an interval from that end, found by
 * bisection (12 steps; what is cut is inside it); at both ends, on the
 * whole box.  Returns 1 if the whole box goes, else shrinks lo, hi (the
 * sides cut counted).
 */
static int reduce_box(bmi *B, const double *q, double margin, double cut, double *lo, double *hi)
{
    for (int k = 0; k < B->nx + B->ny; k++) {
        double l = lo[k], h = hi[k], at_l, at_h;
        if (!(h > l))
            continue;
        lo[k] = hi[k] = l;
        at_l = rayleigh_min(B, q, lo, hi) - margin;
        lo[k] = hi[k] = h;
        at_h = rayleigh_min(B, q, lo, hi) - margin;
        lo[k] = l;
        hi[k] = h;
        if (at_l >= cut && at_h >= cut)
            return 1;
        if (!(at_l >= cut) && !(at_h >= cut))
            continue;
        double in = at_l >= cut ? l : h, out = at_l >= cut ? h : l; /* q >= cut at in, not at out */
        for (int it = 0; it < 12; it++) {
            double mid = 0.5 * (in + out);
            lo[k] = hi[k] = mid;
            double v = rayleigh_min(B, q, lo, hi) - margin;
            lo[k] = l;
            hi[k] = h;
            if (v >= cut)
                in = mid;
            else
                out = mid;
        }
        if (at_l >= cut)
            lo[k] = in;
        else
            hi[k] = in;
        B->reduced++;
    }
    return 0;
}

static void pack_box(const bmi *B, unsigned char *s, const double *lo, const double *hi)
{
    for (int k = 0; k < B->nx + B->ny; k++) {
        memcpy(s + 16 * (size_t)k, &lo[k], 8);
        memcpy(s + 16 * (size_t)k + 8, &hi[k], 8);
    }
}

/* A subproblem whose semidefinite bound (node_sdp) already prunes it
 * (tb_bnb_children_cutoff) gets no children; else it is cut where that bound
 * says, and each half gets the eigenvalue bounds and, as a lower bound of
 * every part of the box, the parent's semidefinite one. */
static int b_branch(void *ctx, const void *s, size_t len, tb_bnb_children *kids)
{
    bmi *B = ctx;
    TB_CHECK(check_len(B, len));
    int var = -1;
    double lo[128], hi[128], pt[128], sb = -INFINITY, cut = tb_bnb_children_cutoff(kids);
    const double *q = NULL;
    unsigned char box[128 * 16], half[2][128 * 16];
    box_of(B, s, lo, hi);
    if (!box_wide(B, lo, hi)) /* a point, for all purposes */
        return TB_OK;
    memcpy(box, s, len);
    if (B->sdp) {
        TB_CHECK(node_sdp(B, s, lo, hi, NAN, &sb, &var, pt));
        if (sb >= cut) {
            B->pruned++;
            return TB_OK;
        }
        if (!isnan(B->last_margin))
            q = B->last_q;
        if (q && isfinite(cut)) {
            if (reduce_box(B, q, B->last_margin, cut, lo, hi)) {
                B->pruned++;
                return TB_OK;
            }
            pack_box(B, box, lo, hi);
        }
    }
    if (!bisect(B, box, var, half[0], half[1]))
        return TB_OK;
    for (int h = 0; h < 2; h++) {
        double bound, lam_c;
        box_of(B, half[h], lo, hi);
        if (q && isfinite(cut)) {
            if (reduce_box(B, q, B->last_margin, cut, lo, hi)) {
                B->pruned++;
                continue;
            }
            pack_box(B, half[h], lo, hi);
        }
        TB_CHECK(cheap_bound(B, lo, hi, &bound, &lam_c));
        if (sb > bound)
            bound = sb;
        if (q) {
            double qb = rayleigh_min(B, q, lo, hi) - B->last_margin;
            if (qb > bound)
                bound = qb;
        }
        TB_CHECK(tb_bnb_child(kids, half[h], box_len(B), bound));
    }
    return TB_OK;
}

/* Bisection by the widest side with no bound. */
static int b_bisect(void *ctx, const void *s, size_t len, tb_bnb_children *kids)
{
    bmi *B = ctx;
    TB_CHECK(check_len(B, len));
    unsigned char lo[128 * 16], hi[128 * 16];
    if (!bisect(B, s, -1, lo, hi))
        return TB_OK;
    TB_CHECK(tb_bnb_child(kids, lo, box_len(B), NAN));
    return tb_bnb_child(kids, hi, box_len(B), NAN);
}

/*
 * The split (the start-up's, and a master's for idle workers): the box
 * bisected breadth first by the widest side, every piece with the parent's
 * bound; it solves nothing (the contract of tb_bnb_ops.split: a simulated
 * run charges it nothing).  Used with the eigenvalue bounds alone (cheap
 * nodes); with the semidefinite bound b_splits says not to, and the tree
 * grows by the workers' own branching, every cut the relaxation's: cuts by
 * the widest side made 2 real ranks expand 2,907 nodes of nx = ny = 4
 * against the sequential search's 1,571, and S5's simulated grid 1.56
 * times the nodes at nx = ny = 5.  The split once made its first 16 cuts
 * as branch does: solves no simulated run paid for (13,140 for 2,066 nodes
 * on that grid) and, mixed with the widest cuts, 4.4 times the nodes in a
 * lone cluster (docs/bnb.md, "Split").
 */
static int b_split(void *ctx, const void *s, size_t len, int ways, tb_bnb_children *kids)
{
    static const tb_bnb_ops split_ops = {sizeof(tb_bnb_ops), TB_BNB_MINIMIZE, b_root, b_bound,
                                         b_bisect, b_evaluate, NULL};
    return tb_bnb_split_by_branch(&split_ops, ctx, s, len, ways, kids);
}

static int b_splits(void *ctx) { return !((const bmi *)ctx)->sdp; }

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
    free(B->dv);
    free(B->work);
    free(B->c);
    free(B->isuppz);
    free(B->packed);
    free(B->ik);
    free(B->rows);
    free(B->vals);
    free(B->yv);
    free(B->X);
    free(B->U);
    free(B->ev);
    free(B->last);
    free(B->last_q);
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

/* The semidefinite bound's data: the matrices as DSDP takes them, room for
 * the envelope's rows.  TENBIN_BMI_BOUND=eigen leaves it out (the bounds
 * 1. and 2. alone), and so does an instance with more than 1,024 variables
 * in the relaxation (nx ny > ~1,000), where one solve would take seconds. */
static int sdp_prepare(bmi *B, const char *path, char *err, size_t errlen)
{
    static const char *const words[] = {"sdp", "eigen", NULL};
    int which = 0;
    long its = 60;
    (void)tb_env_word("TENBIN_BMI_BOUND", words, &which); /* a wrong word: warned, sdp */
    if (tb_env_int_in("TENBIN_BMI_SDP_ITERATIONS", 0, 1000, &its) == TB_ERR_RANGE)
        TB_LOG_WARN("TENBIN_BMI_SDP_ITERATIONS is not from 0 to 1000; using 60");
    if (its < 0 || its > 1000) /* (not a number: warned) */
        its = 60;
    B->sdp_its = (int)its;
    B->nv = 1 + B->nx + B->ny + B->nx * B->ny;
    B->sdp = which == 0 && B->nv <= 1024;
    if (!B->sdp)
        return TB_OK;
    int m = B->m, nrows = 4 * B->nx * B->ny;
    size_t np = (size_t)m * (size_t)(m + 1) / 2, nmat = (size_t)(B->nx + 1) * (size_t)(B->ny + 1);
    B->packed = malloc(nmat * np * sizeof *B->packed);
    B->ik = malloc((size_t)(B->nv + 2) * sizeof *B->ik);
    B->rows = malloc((size_t)nrows * 4 * sizeof *B->rows);
    B->vals = malloc((size_t)nrows * 4 * sizeof *B->vals);
    B->yv = malloc((size_t)B->nv * sizeof *B->yv);
    B->X = malloc((size_t)m * (size_t)m * sizeof *B->X);
    B->U = malloc((size_t)m * (size_t)m * sizeof *B->U);
    B->ev = malloc((size_t)m * sizeof *B->ev);
    B->last = malloc(box_len(B));
    B->last_q = malloc(nmat * sizeof *B->last_q);
    if (!B->packed || !B->ik || !B->rows || !B->vals || !B->yv || !B->X || !B->U || !B->ev ||
        !B->last || !B->last_q) {
        snprintf(err, errlen, "%s: out of memory", path);
        return TB_ERR_NOMEM;
    }
    /* The envelope of w = uv on [-1, 1]^2 (sdp_bound's variables), rows
     * r..r+3 of c - A'(t, u, v, w) >= 0:
     *   w + u + v + 1 >= 0,  w - u - v + 1 >= 0,
     *  -w + u - v + 1 >= 0, -w - u + v + 1 >= 0;
     * by columns (DSDP's LP cone): the constant, t (none), u_i, v_j, w_ij. */
    int nx = B->nx, ny = B->ny, at = 0, col = 0;
#define ROW(r, v) (B->rows[at] = (r), B->vals[at++] = (v))
    B->ik[col++] = at;
    for (int r = 0; r < nrows; r++)
        ROW(r, 1.0);
    B->ik[col++] = at; /* t */
    for (int i = 0; i < nx; i++) {
        B->ik[col++] = at;
        for (int j = 0; j < ny; j++) {
            int r = 4 * (i * ny + j);
            ROW(r, -1.0), ROW(r + 1, 1.0), ROW(r + 2, -1.0), ROW(r + 3, 1.0);
        }
    }
    for (int j = 0; j < ny; j++) {
        B->ik[col++] = at;
        for (int i = 0; i < nx; i++) {
            int r = 4 * (i * ny + j);
            ROW(r, -1.0), ROW(r + 1, 1.0), ROW(r + 2, 1.0), ROW(r + 3, -1.0);
        }
    }
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++) {
            B->ik[col++] = at;
            int r = 4 * (i * ny + j);
            ROW(r, -1.0), ROW(r + 1, -1.0), ROW(r + 2, 1.0), ROW(r + 3, 1.0);
        }
    B->ik[col] = at;
#undef ROW
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
        B->dv = calloc(2 * (size_t)B->m, sizeof *B->dv);
        B->c = calloc(nmat, sizeof *B->c);
        B->isuppz = calloc(2 * (size_t)B->m, sizeof *B->isuppz);
        if (!B->F || !B->rho || !B->lo || !B->hi || !B->A || !B->w || !B->z || !B->dv || !B->c ||
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
    if (rc == TB_OK)
        rc = sdp_prepare(B, path, err, errlen);
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

static const char *const bmi_count_names[] = {"sdp_bounds", "sdp_failed", "sdp_pruned",
                                               "sdp_reduced"};

/* The semidefinite bounds computed, those whose solve failed (the
 * eigenvalue bounds stood alone), the subproblems they pruned after the
 * eigenvalue bounds had not (the whole box, or a half of it, by range
 * reduction), and the sides range reduction shortened. */
static void b_counts(void *ctx, uint64_t *out)
{
    const bmi *B = ctx;
    out[0] = B->solves;
    out[1] = B->failed;
    out[2] = B->pruned;
    out[3] = B->reduced;
}

const tb_bnb_problem tb_bnb_bmi = {.name = "bmi",
                                   .ops = &bmi_ops,
                                   .load = b_load,
                                   .destroy = b_destroy,
                                   .solution_json = b_solution_json,
                                   .check = b_check,
                                   .default_gap = 1e-3,
                                   .solution_at_top = 1,
                                   .splits = b_splits,
                                   .ncounts = 4,
                                   .count_names = bmi_count_names,
                                   .counts = b_counts};

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
    return tb_bnb_bmi_generate_scaled(out, m, nx, ny, seed, 1.0);
}

int tb_bnb_bmi_generate_scaled(FILE *out, int m, int nx, int ny, uint64_t seed, double scale)
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
                    F[k * mm + (size_t)b * (size_t)m + (size_t)a] =
                        scale * tb_rng_uniform(&r, -1.0, 1.0);
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
