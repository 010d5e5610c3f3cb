// Long rows outside tile-mlir: a hand-written CUDA softmax (and an RMSNorm-like kernel with one
// reduction) over rows held in registers across a thread-block cluster, timed against cudaMemcpy
// in one run. It asks what bounds the fused kernels' long rows (64x262144 and 1024x65536 f32):
//   mode 0: one row per cluster, the CTAs' partials exchanged between cluster barriers (pull);
//   mode 4: a persistent grid of the clusters the GPU holds, the next row in flight into shared
//           memory (cp.async) while this one is reduced, the exchange through mbarriers (push);
//   mode 5: one row per cluster, the exchange through mbarriers (st.async + mbarrier complete_tx);
//   mode 6: mode 5 with one exp per element (e = exp(x - m) kept, scaled by exp(m - A) / S);
//   mode 7: one reduction (the sum of squares) and y = x * rsqrt(mean + eps): no exp at all.
// (modes 1-3, kept for the record: persistent from registers, cp.async with the pull, and a relaxed
// cluster barrier that is not a correct protocol.) `python -m benchmarks.long_rows` builds and runs it.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }


__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(smem_u32(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, int phase) {
  asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}\n"
               :: "r"(smem_u32(bar)), "r"(phase) : "memory");
}
__device__ __forceinline__ void st_async(float* local_slot, uint64_t* local_bar, int rank, float v) {
  unsigned a, b;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(a) : "r"(smem_u32(local_slot)), "r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(b) : "r"(smem_u32(local_bar)), "r"(rank));
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" :: "r"(a), "r"(__float_as_uint(v)), "r"(b) : "memory");
}
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}

// The CTA's partial: the lane butterfly, then the warps' partials through shared memory.
template <int THREADS, bool MAX>
__device__ __forceinline__ float cta_reduce(float v, float* warp_part) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  #pragma unroll
  for (int o = 16; o; o >>= 1) { float u = __shfl_xor_sync(0xffffffff, v, o); v = MAX ? fmaxf(v, u) : v + u; }
  if (lane == 0) warp_part[warp] = v;
  __syncthreads();
  float t = MAX ? -INFINITY : 0.f;
  #pragma unroll
  for (int w = 0; w < THREADS / 32; ++w) t = MAX ? fmaxf(t, warp_part[w]) : t + warp_part[w];
  return t;
}

// The exchange through mbarriers: CTA r sends its partial to slot r of every CTA (st.async), each waits on its own mbarrier.
template <int THREADS, int CL, bool MAX>
__device__ __forceinline__ float cluster_reduce_mbar(float v, float* warp_part, float* recv, uint64_t* bar, int e, int rank) {
  int tid = threadIdx.x;
  float t = cta_reduce<THREADS, MAX>(v, warp_part);
  int p = e & 1, phase = (e >> 1) & 1;
  if (tid == 0) mbar_expect_tx(&bar[p], CL * 4);
  if (tid < CL) st_async(&recv[p * CL + rank], &bar[p], tid, t);
  mbar_wait(&bar[p], phase);
  float r = MAX ? -INFINITY : 0.f;
  #pragma unroll
  for (int c = 0; c < CL; ++c) r = MAX ? fmaxf(r, recv[p * CL + c]) : r + recv[p * CL + c];
  return r;
}

template <int THREADS, int CL, bool MAX, bool RELAXED>
__device__ __forceinline__ float cluster_reduce(float v, float* warp_part, float* cta_part, int parity) {
  cg::cluster_group cluster = cg::this_cluster();
  int tid = threadIdx.x;
  float t = cta_reduce<THREADS, MAX>(v, warp_part);
  if (CL == 1) { __syncthreads(); return t; }
  if (tid == 0) cta_part[parity] = t;
  if (RELAXED) cluster_sync_relaxed(); else cluster.sync();
  float r = MAX ? -INFINITY : 0.f;
  #pragma unroll
  for (int c = 0; c < CL; ++c) { float* p = cluster.map_shared_rank(cta_part, c); r = MAX ? fmaxf(r, p[parity]) : r + p[parity]; }
  // no second barrier: the next exchange writes the other parity slot; the one after waits behind the next cluster.sync
  return r;
}

// mode 0: one row per cluster, loads into registers. 1: persistent, loads into registers at the top.
// 2: persistent, the next row in flight through shared memory (cp.async).
template <int N, int THREADS, int C, int CL, int MODE>
__global__ void __launch_bounds__(THREADS) softmax(const float4* __restrict__ X, float4* __restrict__ Y, int M) {
  extern __shared__ float4 stage[];
  __shared__ float warp_part[THREADS / 32];
  __shared__ float cta_part[2];
  __shared__ float recv[2 * CL];
  __shared__ __align__(8) uint64_t bar[2];
  int e = 0;
  cg::cluster_group cluster = cg::this_cluster();
  const int tid = threadIdx.x;
  const int rank = CL > 1 ? cluster.block_rank() : 0;
  const int g = blockIdx.x / CL, G = gridDim.x / CL;
  const int CH4 = THREADS * C;  // float4 per CTA part
  const int N4 = N / 4;
  int parity = 0;
  if (MODE >= 4) { if (threadIdx.x == 0) { mbar_init(&bar[0], 1); mbar_init(&bar[1], 1); asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); } cluster.sync(); }
  auto issue = [&](int row) {
    const float4* src = X + (size_t)row * N4 + rank * CH4;
    #pragma unroll
    for (int c = 0; c < C; ++c) cp_async16(&stage[c * THREADS + tid], src + c * THREADS + tid);
    cp_commit();
  };
  if (MODE >= 2 && MODE < 5 && g < M) issue(g);
  for (int row = g; row < M; row += (MODE == 0 || MODE >= 5 ? M : G)) {
    float4 v[C];
    if (MODE >= 2 && MODE < 5) {
      cp_wait_all();
      #pragma unroll
      for (int c = 0; c < C; ++c) v[c] = stage[c * THREADS + tid];
    } else {
      const float4* src = X + (size_t)row * N4 + rank * CH4;
      #pragma unroll
      for (int c = 0; c < C; ++c) v[c] = __ldg(src + c * THREADS + tid);
    }
    if constexpr (MODE == 7) {
      float ss = 0.f;
      #pragma unroll
      for (int c = 0; c < C; ++c) ss += v[c].x * v[c].x + v[c].y * v[c].y + v[c].z * v[c].z + v[c].w * v[c].w;
      float S = cluster_reduce_mbar<THREADS, CL, false>(ss, warp_part, recv, bar, e++, rank);
      float r = rsqrtf(S / N + 1e-6f);
      float4* dst = Y + (size_t)row * N4 + rank * CH4;
      #pragma unroll
      for (int c = 0; c < C; ++c) __stcs(dst + c * THREADS + tid, make_float4(v[c].x * r, v[c].y * r, v[c].z * r, v[c].w * r));
    } else if constexpr (MODE == 6) {
      float m = -INFINITY;
      #pragma unroll
      for (int c = 0; c < C; ++c) m = fmaxf(m, fmaxf(fmaxf(v[c].x, v[c].y), fmaxf(v[c].z, v[c].w)));
      float s = 0.f;
      #pragma unroll
      for (int c = 0; c < C; ++c) { v[c].x = __expf(v[c].x - m); v[c].y = __expf(v[c].y - m); v[c].z = __expf(v[c].z - m); v[c].w = __expf(v[c].w - m); s += v[c].x + v[c].y + v[c].z + v[c].w; }
      float A = cluster_reduce_mbar<THREADS, CL, true>(m, warp_part, recv, bar, e++, rank);
      __syncthreads();
      float S = cluster_reduce_mbar<THREADS, CL, false>(s * __expf(m - A), warp_part, recv, bar, e++, rank);
      float f = __expf(m - A) / S;
      float4* dst = Y + (size_t)row * N4 + rank * CH4;
      #pragma unroll
      for (int c = 0; c < C; ++c) __stcs(dst + c * THREADS + tid, make_float4(v[c].x * f, v[c].y * f, v[c].z * f, v[c].w * f));
    } else {
    float m = -INFINITY;
      #pragma unroll
      for (int c = 0; c < C; ++c) m = fmaxf(m, fmaxf(fmaxf(v[c].x, v[c].y), fmaxf(v[c].z, v[c].w)));
      if (MODE >= 2 && MODE < 5 && row + G < M) {
        asm volatile("" :: "f"(m) : "memory");
        issue(row + G);
      }
      float A = MODE >= 4 ? cluster_reduce_mbar<THREADS, CL, true>(m, warp_part, recv, bar, e++, rank)
                          : cluster_reduce<THREADS, CL, true, MODE == 3>(m, warp_part, cta_part, parity); parity ^= 1;
      float s = 0.f;
      #pragma unroll
      for (int c = 0; c < C; ++c) s += __expf(v[c].x - A) + __expf(v[c].y - A) + __expf(v[c].z - A) + __expf(v[c].w - A);
      __syncthreads();  // warp_part reuse
      float S = MODE >= 4 ? cluster_reduce_mbar<THREADS, CL, false>(s, warp_part, recv, bar, e++, rank)
                          : cluster_reduce<THREADS, CL, false, MODE == 3>(s, warp_part, cta_part, parity); parity ^= 1;
      float inv = 1.f / S;
      float4* dst = Y + (size_t)row * N4 + rank * CH4;
      #pragma unroll
      for (int c = 0; c < C; ++c) {
        float4 o = make_float4(__expf(v[c].x - A) * inv, __expf(v[c].y - A) * inv, __expf(v[c].z - A) * inv, __expf(v[c].w - A) * inv);
        __stcs(dst + c * THREADS + tid, o);
      }
    }
    __syncthreads();
  }
  if (CL > 1) cluster.sync();  // no CTA exits while another may read its cta_part
}

__global__ void copy(const float4* __restrict__ X, float4* __restrict__ Y, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) Y[i] = X[i];
}

template <int N, int THREADS, int C, int CL, int MODE>
void run(const char* name, float4* X, float4* Y, int M, float* host, double copy_gbps) {
  auto k = softmax<N, THREADS, C, CL, MODE>;
  size_t smem = (MODE >= 2 && MODE < 5) ? (size_t)THREADS * C * 16 : 0;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  if (CL > 8) CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CL; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cfg.blockDim = dim3(THREADS); cfg.dynamicSmemBytes = smem; cfg.attrs = attr; cfg.numAttrs = 1;
  cfg.gridDim = dim3(CL);
  int clusters = 0;
  CK(cudaOccupancyMaxActiveClusters(&clusters, k, &cfg));
  int G = (MODE == 0 || MODE >= 5) ? M : (clusters < M ? clusters : M);
  cfg.gridDim = dim3(G * CL);
  CK(cudaMemset(Y, 0xff, (size_t)M * N * 4));
  CK(cudaLaunchKernelEx(&cfg, k, (const float4*)X, Y, M));
  CK(cudaDeviceSynchronize());
  // check one row against float64
  std::vector<float> y(N);
  int r = M / 3;
  CK(cudaMemcpy(y.data(), (float*)Y + (size_t)r * N, N * 4, cudaMemcpyDeviceToHost));
  double mx = -1e300, s = 0, ss = 0, err = 0; const float* x = host + (size_t)r * N;
  for (int i = 0; i < N; ++i) { mx = x[i] > mx ? x[i] : mx; ss += (double)x[i] * x[i]; }
  for (int i = 0; i < N; ++i) s += exp((double)x[i] - mx);
  for (int i = 0; i < N; ++i) {
    double want = MODE == 7 ? x[i] / sqrt(ss / N + 1e-6) : exp((double)x[i] - mx) / s;
    double e = fabs(y[i] - want) / (fabs(want) + 1e-30); err = e > err ? e : err;
  }
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(a);
    for (int i = 0; i < 20; ++i) CK(cudaLaunchKernelEx(&cfg, k, (const float4*)X, Y, M));
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); ms /= 20; best = ms < best ? ms : best;
  }
  double gbps = 2.0 * M * N * 4 / (best * 1e-3) / 1e9;
  printf("{\"kernel\": \"%s\", \"M\": %d, \"N\": %d, \"threads\": %d, \"C\": %d, \"CL\": %d, \"clusters_resident\": %d, \"grid\": %d, \"us\": %.2f, \"GBs\": %.0f, \"pct_copy\": %.1f, \"max_rel_err\": %.2e}\n",
         name, M, N, THREADS, C, CL, clusters, G * CL, best * 1e3, gbps, 100 * gbps / copy_gbps, err);
}

double time_copy(float4* X, float4* Y, size_t n4) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  copy<<<132 * 8, 512>>>(X, Y, n4); CK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(a);
    for (int i = 0; i < 20; ++i) copy<<<132 * 8, 512>>>(X, Y, n4);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); ms /= 20; best = ms < best ? ms : best;
  }
  return 2.0 * n4 * 16 / (best * 1e-3) / 1e9;
}

template <int N, int M>
void shape() {
  size_t n = (size_t)M * N;
  std::vector<float> h(n);
  srand(1); for (size_t i = 0; i < n; ++i) h[i] = (rand() / (float)RAND_MAX) * 8.f - 4.f;
  float4 *X, *Y; CK(cudaMalloc(&X, n * 4)); CK(cudaMalloc(&Y, n * 4));
  CK(cudaMemcpy(X, h.data(), n * 4, cudaMemcpyHostToDevice));
  double c = time_copy(X, Y, n / 4);
  { cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); float best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) { cudaEventRecord(a); for (int i = 0; i < 20; ++i) cudaMemcpyAsync(Y, X, n * 4, cudaMemcpyDeviceToDevice); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ms /= 20; best = ms < best ? ms : best; }
    double mc = 2.0 * n * 4 / (best * 1e-3) / 1e9;
    printf("{\"kernel\": \"copy\", \"M\": %d, \"N\": %d, \"GBs\": %.0f, \"memcpy_GBs\": %.0f}\n", M, N, c, mc);
    c = mc > c ? mc : c; }
  if constexpr (N == 262144) {
    run<N, 512, 8, 16, 0>("softmax, one row per cluster, pull", X, Y, M, h.data(), c);
    run<N, 512, 8, 16, 4>("softmax, persistent, next row in smem, push", X, Y, M, h.data(), c);
    run<N, 512, 8, 16, 5>("softmax, one row per cluster, push", X, Y, M, h.data(), c);
    run<N, 512, 8, 16, 6>("softmax, one row per cluster, push, one exp", X, Y, M, h.data(), c);
    run<N, 256, 16, 16, 6>("softmax, one row per cluster, push, one exp", X, Y, M, h.data(), c);
    run<N, 512, 8, 16, 7>("rms, one row per cluster, push", X, Y, M, h.data(), c);
  } else {
    run<N, 256, 8, 8, 0>("softmax, one row per cluster, pull", X, Y, M, h.data(), c);
    run<N, 256, 8, 8, 4>("softmax, persistent, next row in smem, push", X, Y, M, h.data(), c);
    run<N, 256, 8, 8, 5>("softmax, one row per cluster, push", X, Y, M, h.data(), c);
    run<N, 256, 8, 8, 6>("softmax, one row per cluster, push, one exp", X, Y, M, h.data(), c);
    run<N, 512, 8, 4, 6>("softmax, one row per cluster, push, one exp", X, Y, M, h.data(), c);
    run<N, 512, 8, 4, 7>("rms, one row per cluster, push", X, Y, M, h.data(), c);
  }
  cudaFree(X); cudaFree(Y);
}

int main() {
  shape<262144, 64>();
  shape<65536, 1024>();
  return 0;
}
