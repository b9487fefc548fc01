/* providers/cusolvermp/redist.c - a redistribution plan run on the GPUs:
 * gather what goes to a peer into scratch, NCCL send/recv, scatter what
 * came (mp.h). */
#include "job.h"
#include "kernels.h"

/* One direction of one round: the lists and the chunking of a peer. */
typedef struct side {
  const int64_t *rows, *cols; /* device index lists                   */
  int64_t nr, nc, kc, nchunks;
} side_t;

static side_t side_of(const int64_t *didx, mp_span_t r, mp_span_t cl, int64_t cap) {
  side_t s = {didx + r.off, didx + cl.off, r.len, cl.len, mp_chunk_cols(r.len, cl.len, cap),
              mp_nchunks(r.len, cl.len, cap)};
  return s;
}

/* Columns of chunk ch of side s: [c0, c0 + w). */
static int64_t chunk(const side_t *s, int64_t ch, int64_t *w) {
  int64_t c0 = ch * s->kc;
  *w = s->nc - c0 < s->kc ? s->nc - c0 : s->kc;
  return c0;
}

int mp_redist(mp_job_t *j, const mp_plan_t *p, const void *src, int64_t lds, void *dst, int64_t ldd) {
  const mp_api_t *api = j->api;
  mp_comm_t *m = j->m;
  cuc_err_t *E = j->E;
  size_t esz = j->esz;
  int64_t cap = j->cap;
  int rc = 0;
  CUC_CHECK(mp_comm_buf(m, MP_BUF_IDX, (size_t)(p->nidx > 0 ? p->nidx : 1) * sizeof(int64_t),
                        "the redistribution's index lists", E));
  const int64_t *didx = m->buf[MP_BUF_IDX];
  char *sbuf = m->buf[MP_BUF_SEND], *rbuf = m->buf[MP_BUF_RECV];
  if (p->nidx > 0)
    CUC_CU(m->device, cudaMemcpyAsync(m->buf[MP_BUF_IDX], p->idx, (size_t)p->nidx * sizeof(int64_t),
                                      cudaMemcpyHostToDevice, m->stream));
  for (int k = 0; k < p->nranks; k++) {
    int to = (p->rank + k) % p->nranks, from = (p->rank - k + p->nranks) % p->nranks;
    side_t s = side_of(didx, p->send_rows[to], p->send_cols[to], cap);
    side_t r = side_of(didx, p->recv_rows[from], p->recv_cols[from], cap);
    int64_t n = s.nchunks > r.nchunks ? s.nchunks : r.nchunks;
    for (int64_t ch = 0; ch < n; ch++) {
      int64_t sw = 0, rw = 0, s0 = ch < s.nchunks ? chunk(&s, ch, &sw) : 0, r0 = ch < r.nchunks ? chunk(&r, ch, &rw) : 0;
      if (sw) CUC_CU(m->device, mp_gather(esz, sbuf, s.nr, src, lds, s.rows, s.cols + s0, s.nr, sw, m->stream));
      if (k == 0) { /* to itself: what was gathered is what comes */
        if (rw) CUC_CU(m->device, mp_scatter(esz, dst, ldd, sbuf, r.nr, r.rows, r.cols + r0, r.nr, rw, m->stream));
        continue;
      }
      CUC_CHECK(mp_nccl_ready(j->c, j->run, m, E));
      MP_NC(m->device, api->ncclGroupStart());
      if (sw) MP_NC(m->device, api->ncclSend(sbuf, (size_t)(s.nr * sw) * esz, MP_NCCL_INT8, to, m->nccl, m->stream));
      if (rw) MP_NC(m->device, api->ncclRecv(rbuf, (size_t)(r.nr * rw) * esz, MP_NCCL_INT8, from, m->nccl, m->stream));
      MP_NC(m->device, api->ncclGroupEnd());
      CUC_CHECK(mp_nccl_ready(j->c, j->run, m, E));
      if (rw) CUC_CU(m->device, mp_scatter(esz, dst, ldd, rbuf, r.nr, r.rows, r.cols + r0, r.nr, rw, m->stream));
    }
  }
out:
  return rc;
}
