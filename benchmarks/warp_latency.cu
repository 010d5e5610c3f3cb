// Reference for benchmark 2: cycles per dependent warp reduction, hand-written CUDA.
// Built and run by benchmarks.run on the GPU machine:
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o warp_latency warp_latency.cu
// Prints one JSON object per line: {"name": ..., "cycles": per reduction, "ok": bool}.
// Method (the same as the MLIR kernels'): one warp, K dependent reductions between two
// clock64 reads; cycles = (T(K2) - T(K1)) / (K2 - K1), medians of several launches.
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

// LANES-wide xor butterfly (offsets LANES/2 .. 1), ROWS independent values per lane.
template <int LANES, int ROWS, typename T>
__global__ void shfl_chain(const T* a, T* b, long long* t, long long k) {
  int lane = threadIdx.x & 31;
  T v[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) v[r] = a[lane * ROWS + r];
  long long t0 = clock64();
  for (long long i = 0; i < k; ++i) {
#pragma unroll
    for (int off = LANES / 2; off >= 1; off >>= 1) {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) v[r] += __shfl_xor_sync(0xffffffffu, v[r], off);
    }
  }
  long long t1 = clock64();
#pragma unroll
  for (int r = 0; r < ROWS; ++r) b[lane * ROWS + r] = v[r];
  t[lane] = t1 - t0;
}

// Full-warp i32 sums through redux.sync (__reduce_add_sync).
template <int ROWS>
__global__ void redux_chain(const int* a, int* b, long long* t, long long k) {
  int lane = threadIdx.x & 31;
  int v[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) v[r] = a[lane * ROWS + r];
  long long t0 = clock64();
  for (long long i = 0; i < k; ++i) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) v[r] = __reduce_add_sync(0xffffffffu, v[r]);
  }
  long long t1 = clock64();
#pragma unroll
  for (int r = 0; r < ROWS; ++r) b[lane * ROWS + r] = v[r];
  t[lane] = t1 - t0;
}

template <typename T>
struct Buffers {
  int n;
  T *a, *b;
  long long* t;
  std::vector<T> host;
  explicit Buffers(int rows) : n(32 * rows), host(32 * rows) {
    uint32_t s = 12345u + rows;
    for (auto& x : host) {  // fresh, non-zero inputs
      s = s * 1664525u + 1013904223u;
      x = (T)(1 + (s >> 24) % 7);
    }
    CHECK(cudaMalloc(&a, n * sizeof(T)));
    CHECK(cudaMalloc(&b, n * sizeof(T)));
    CHECK(cudaMalloc(&t, 32 * sizeof(long long)));
    CHECK(cudaMemcpy(a, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~Buffers() { cudaFree(a); cudaFree(b); cudaFree(t); }
};

// Median of 7 launches of T(k), lane 0's clock difference.
template <typename T, typename Kernel>
double timed(Kernel kernel, Buffers<T>& buf, long long k) {
  std::vector<long long> samples;
  for (int i = 0; i < 7; ++i) {
    kernel<<<1, 32>>>(buf.a, buf.b, buf.t, k);
    CHECK(cudaGetLastError());
    long long t0;
    CHECK(cudaMemcpy(&t0, buf.t, sizeof(t0), cudaMemcpyDeviceToHost));
    samples.push_back(t0);
  }
  std::sort(samples.begin(), samples.end());
  return (double)samples[samples.size() / 2];
}

// One reduction (k = 1) against the host: every lane of a LANES-group holds the group's sum.
template <typename T, typename Kernel>
bool check(Kernel kernel, Buffers<T>& buf, int lanes, int rows) {
  kernel<<<1, 32>>>(buf.a, buf.b, buf.t, 1);
  CHECK(cudaGetLastError());
  std::vector<T> out(buf.n);
  CHECK(cudaMemcpy(out.data(), buf.b, buf.n * sizeof(T), cudaMemcpyDeviceToHost));
  for (int lane = 0; lane < 32; ++lane)
    for (int r = 0; r < rows; ++r) {
      T want = 0;
      int g = lane / lanes * lanes;
      for (int l = g; l < g + lanes; ++l) want += buf.host[l * rows + r];
      if (out[lane * rows + r] != want) return false;
    }
  return true;
}

template <typename T, typename Kernel>
void run(const char* name, Kernel kernel, int lanes, int rows) {
  Buffers<T> buf(rows);
  bool ok = check(kernel, buf, lanes, rows);
  const long long k1 = 100, k2 = 1100;
  timed(kernel, buf, k1);  // warm-up
  double c = (timed(kernel, buf, k2) - timed(kernel, buf, k1)) / double(k2 - k1);
  std::printf("{\"name\": \"%s\", \"cycles\": %.2f, \"ok\": %s}\n", name, c, ok ? "true" : "false");
}

int main() {
  run<float>("cuda_shfl_f32_l32_r1", shfl_chain<32, 1, float>, 32, 1);
  run<int>("cuda_shfl_i32_l32_r1", shfl_chain<32, 1, int>, 32, 1);
  run<int>("cuda_redux_i32_l32_r1", redux_chain<1>, 32, 1);
  run<float>("cuda_shfl_f32_l4_r1", shfl_chain<4, 1, float>, 4, 1);
  run<int>("cuda_shfl_i32_l4_r1", shfl_chain<4, 1, int>, 4, 1);
  run<float>("cuda_shfl_f32_l32_r8", shfl_chain<32, 8, float>, 32, 8);
  run<int>("cuda_shfl_i32_l32_r8", shfl_chain<32, 8, int>, 32, 8);
  run<int>("cuda_redux_i32_l32_r8", redux_chain<8>, 32, 8);
  return 0;
}
