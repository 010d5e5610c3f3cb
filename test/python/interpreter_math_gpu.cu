// The H200's side of the interpreter's ULP bounds (see interpreter_math_gpu.py).
//
// CUDA C's math functions call the same libdevice functions as MLIR's lowering of the
// math dialect (expf -> __nv_expf...). Build it as MLIR builds (no fast math, no
// flush-to-zero, the approximate f32 sqrt that MLIR's NVVM target selects):
//     nvcc -O2 -arch=sm_90a -prec-sqrt=false -o math_gpu interpreter_math_gpu.cu
//     OUT=dir ./math_gpu
// It writes dir/f32.bin, f16.bin, bf16.bin (f32 functions, on random f32 values, on every
// f16 value, on every bf16 value) and f64.bin: 3 input arrays, then the 33 ops' outputs.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define OP(n, e) case n: r = e; break;
template <class T> __device__ T apply(int op, T x, T y, T z) {
  T r = 0;
  switch (op) {
    OP(0, fabs(x)) OP(1, ceil(x)) OP(2, floor(x)) OP(3, round(x)) OP(4, rint(x))
    OP(5, sqrt(x)) OP(6, rsqrt(x)) OP(7, cbrt(x)) OP(8, exp(x)) OP(9, exp2(x))
    OP(10, expm1(x)) OP(11, log(x)) OP(12, log2(x)) OP(13, log10(x)) OP(14, log1p(x))
    OP(15, sin(x)) OP(16, cos(x)) OP(17, tan(x)) OP(18, asin(x)) OP(19, acos(x))
    OP(20, atan(x)) OP(21, sinh(x)) OP(22, cosh(x)) OP(23, tanh(x)) OP(24, asinh(x))
    OP(25, acosh(x)) OP(26, atanh(x)) OP(27, erf(x)) OP(28, erfc(x)) OP(29, pow(x, y))
    OP(30, atan2(x, y)) OP(31, copysign(x, y)) OP(32, fma(x, y, z))
  }
  return r;
}

template <class T> __global__ void kernel(int op, int n, T *x, T *y, T *z, T *r) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) r[i] = apply<T>(op, x[i], y[i], z[i]);
}

static uint64_t state = 88172645463325252ull;
static uint64_t next() {  // xorshift64
  state ^= state << 13; state ^= state >> 7; state ^= state << 17;
  return state;
}

static float half_value(int bits) {
  int e = bits >> 10 & 31, m = bits & 1023;
  float v = e == 31 ? (m ? NAN : INFINITY) : ldexpf(e ? m + 1024 : m, (e ? e : 1) - 25);
  return bits & 32768 ? -v : v;
}

// set 0: a quarter random bit patterns, the rest uniform in [-2, 2), [-100, 100), [0, 10)
// set 1: every f16 value (x), permuted (y, z); set 2: the same for bf16
template <class T> void run(const char *name, int n, int set) {
  size_t bytes = n * sizeof(T);
  T *host = (T *)malloc(bytes * 36), *dev;
  cudaMalloc(&dev, bytes * 36);
  for (int i = 0; i < 3 * n; i++) {
    T v;
    uint64_t w = next();
    double u = (w >> 11) * 0x1p-53;
    int j = i < n ? i : (i % n * 40503 + i / n * 977) & 65535;
    if (set == 1) {
      v = half_value(j);
    } else if (set == 2) {
      uint32_t q = j << 16;
      memcpy(&v, &q, 4);
    } else {
      int g = i % 4;
      if (!g) memcpy(&v, &w, sizeof(T));
      else v = g == 1 ? u * 4 - 2 : g == 2 ? u * 200 - 100 : u * 10;
    }
    host[i] = v;
  }
  cudaMemcpy(dev, host, bytes * 3, cudaMemcpyHostToDevice);
  for (int op = 0; op < 33; op++)
    kernel<T><<<(n + 255) / 256, 256>>>(op, n, dev, dev + n, dev + 2 * n, dev + (3 + op) * n);
  cudaMemcpy(host, dev, bytes * 36, cudaMemcpyDeviceToHost);
  printf("%s %s\n", name, cudaGetErrorString(cudaGetLastError()));
  char path[256];
  snprintf(path, sizeof path, "%s/%s.bin", getenv("OUT"), name);
  FILE *f = fopen(path, "wb");
  fwrite(host, bytes, 36, f);
  fclose(f);
}

int main() {
  run<float>("f32", 65536, 0);
  run<float>("f16", 65536, 1);
  run<float>("bf16", 65536, 2);
  run<double>("f64", 32768, 0);
}
