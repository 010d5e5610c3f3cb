// Reference for benchmark 2b: one cross-warp step, hand-written CUDA.
// Built and run by benchmarks.run on the GPU machine:
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o cross_warp_latency cross_warp_latency.cu
//   ./cross_warp_latency K1 K2 K_LONG
// Prints one JSON object per line: {"name", "cycles", "us", "ok"}.
//
// One block of 32 warps (1024 threads). Warp w's partial is a[w], held by all its lanes;
// each step reduces the 32 partials (f32 sum) so that every thread holds the total, times
// 1/32 (so values stay finite), and that is the next step's partial. Only the exchange is
// in the loop: lane 0's store to shared memory (two halves, alternating, as tile-mlir's
// phase does: one barrier per step is then enough), __syncthreads, the reads, the fold.
//   shfl: each warp reads the 32 partials, one per lane, and folds them with a 5-step
//         __shfl_xor_sync butterfly (the classic block reduction);
//   lds:  each thread reads all 32 partials and folds them in ascending warp order
//         (tile-mlir's cross_warp algorithm, written by hand).
// Method (the same as the MLIR kernel's): cycles = (T(K2) - T(K1)) / (K2 - K1), T the
// clock64 difference around the loop in thread 0, medians of 7 launches; microseconds =
// CUDA-event time of one launch of K_LONG steps / K_LONG, median of 3.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

constexpr int W = 32;           // warps
constexpr int THREADS = 32 * W;

// SHFL: each warp folds the partials with a butterfly; else each thread folds them in order.
template <bool SHFL>
__global__ void xwarp(const float* a, float* b, long long* t, long long k) {
  __shared__ float part[2][W];
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  float v = a[warp];
  int phase = 0;
  long long t0 = clock64();
  for (long long i = 0; i < k; ++i) {
    if (lane == 0) part[phase][warp] = v;
    __syncthreads();
    float s;
    if constexpr (SHFL) {
      s = part[phase][lane];
#pragma unroll
      for (int off = 16; off >= 1; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    } else {
      s = part[phase][0];
#pragma unroll
      for (int w = 1; w < W; ++w) s += part[phase][w];
    }
    v = s * (1.0f / W);
    phase ^= 1;
  }
  long long t1 = clock64();
  b[tid] = v;
  t[tid] = t1 - t0;
}

struct Buffers {
  float *a, *b;
  long long* t;
  std::vector<float> host;
  Buffers() : host(W) {
    unsigned s = 2024u;
    for (auto& x : host) {  // fresh, non-zero inputs in [-1, 1)
      s = s * 1664525u + 1013904223u;
      x = ((s >> 8) + 0.5f) / float(1u << 23) - 1.0f;
    }
    CHECK(cudaMalloc(&a, W * sizeof(float)));
    CHECK(cudaMalloc(&b, THREADS * sizeof(float)));
    CHECK(cudaMalloc(&t, THREADS * sizeof(long long)));
    CHECK(cudaMemcpy(a, host.data(), W * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~Buffers() { cudaFree(a); cudaFree(b); cudaFree(t); }
};

using Kernel = void (*)(const float*, float*, long long*, long long);

// Launch with k steps; return thread 0's clock difference, and the results in out.
long long launch(Kernel kernel, Buffers& buf, long long k, std::vector<float>* out = nullptr) {
  CHECK(cudaMemset(buf.b, 0xff, THREADS * sizeof(float)));  // NaN-poisoned
  kernel<<<1, THREADS>>>(buf.a, buf.b, buf.t, k);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  long long t0;
  CHECK(cudaMemcpy(&t0, buf.t, sizeof(t0), cudaMemcpyDeviceToHost));
  if (out) {
    out->resize(THREADS);
    CHECK(cudaMemcpy(out->data(), buf.b, THREADS * sizeof(float), cudaMemcpyDeviceToHost));
  }
  return t0;
}

// After one step every thread holds sum(a) / W; after many, every thread the same value,
// about the mean of a.
bool check(Kernel kernel, Buffers& buf, long long many) {
  double sum = 0, abs_sum = 0;
  for (float x : buf.host) { sum += x; abs_sum += std::fabs(x); }
  std::vector<float> out;
  for (long long k : {1LL, many}) {
    launch(kernel, buf, k, &out);
    double tol = k == 1 ? 1e-6 * abs_sum : 1e-4 * abs_sum / W;
    for (float x : out)
      if (x != out[0] || !(std::fabs(x - sum / W) <= tol)) return false;
  }
  return true;
}

double median_clock(Kernel kernel, Buffers& buf, long long k) {
  std::vector<long long> s;
  for (int i = 0; i < 7; ++i) s.push_back(launch(kernel, buf, k));
  std::sort(s.begin(), s.end());
  return double(s[s.size() / 2]);
}

double median_us(Kernel kernel, Buffers& buf, long long k) {
  cudaEvent_t start, end;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  std::vector<float> s;
  for (int i = 0; i < 3; ++i) {
    CHECK(cudaEventRecord(start));
    kernel<<<1, THREADS>>>(buf.a, buf.b, buf.t, k);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(end));
    CHECK(cudaEventSynchronize(end));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, end));
    s.push_back(ms * 1e3f / float(k));
  }
  std::sort(s.begin(), s.end());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(end));
  return s[1];
}

void run(const char* name, Kernel kernel, long long k1, long long k2, long long k_long) {
  Buffers buf;
  bool ok = check(kernel, buf, k2);
  median_clock(kernel, buf, k1);  // warm-up
  double cycles = (median_clock(kernel, buf, k2) - median_clock(kernel, buf, k1)) / double(k2 - k1);
  double us = median_us(kernel, buf, k_long);
  std::printf("{\"name\": \"%s\", \"cycles\": %.2f, \"us\": %.4f, \"ok\": %s}\n", name, cycles, us, ok ? "true" : "false");
}

int main(int argc, char** argv) {
  long long k1 = argc > 1 ? std::atoll(argv[1]) : 100;
  long long k2 = argc > 2 ? std::atoll(argv[2]) : 1100;
  long long k_long = argc > 3 ? std::atoll(argv[3]) : 100000;
  run("CUDA shfl: __shfl_xor_sync + shared + __syncthreads", xwarp<true>, k1, k2, k_long);
  run("CUDA lds: 32 shared reads, ascending fold", xwarp<false>, k1, k2, k_long);
  return 0;
}
