// cuda-example/main.cu — three boundaries of one kernel, annotated, written as a capture.
//
// What a careful benchmark of one kernel looks like, step by step, with every timer's
// boundary named. It measures a SAXPY (y = a·x + y) over 16 Mi floats on the GPU and writes
// its measurements as a `worksheet` case file, so `worksheet check` can tell which numbers
// are known and what each one means.
//
//   OUTSIDE every timer, before:  initialization, allocation, input copy, warm-up
//   host submission timer:        t0 → event record + launch + launch error check + event record → t1
//   host completion timer:        t0 → (the same submission) → wait on the end event → t2
//   device interval:              start event → end event, one stream, read after `end` completed
//   OUTSIDE every timer, after:   result copy, validation, cleanup
//
// Build and run (README.md):
//   nvcc -O2 -arch=sm_90 -o timing cuda-example/main.cu
//   ./timing cuda-example.json && worksheet check cuda-example.json

#include <cuda_runtime.h>
#include <dlfcn.h>          // the context handle (the device clock's instance) from libcuda

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Every CUDA call is checked; a failure ends the program with the call and the error.
#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,     \
                   cudaGetErrorName(err_), cudaGetErrorString(err_));                    \
      std::exit(2);                                                                      \
    }                                                                                    \
  } while (0)

// The kernel: y[i] = a * x[i] + y[i]. Memory-bound: it reads 8 bytes and writes 4 per element.
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// The host clock: std::chrono::steady_clock, which is CLOCK_MONOTONIC on Linux (nanoseconds
// since boot). Its instance is this boot: readings of two boots are not comparable.
static long long host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

static std::string read_line(const char* path) {
  std::string s;
  if (FILE* f = std::fopen(path, "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof buf, f)) s = buf;
    std::fclose(f);
  }
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "unknown" : s;
}

// Event times come back as float milliseconds: convert once, here, to whole nanoseconds.
static long long ms_to_ns(float ms) { return (long long)((double)ms * 1e6 + 0.5); }

// Nearest-rank quantile (the method `worksheet` uses): sorted[ceil(p/100 * n) - 1].
static long long nearest_rank(std::vector<long long> v, int p) {
  std::sort(v.begin(), v.end());
  size_t rank = (size_t)((p * v.size() + 99) / 100);
  if (rank < 1) rank = 1;
  return v[rank - 1];
}

struct Run {
  long long t0, t1, t2;  // host: timers start; submission stop; wait return = completion stop
  long long device_ns;   // device interval (start → end events)
};

static void json_ns_list(FILE* f, const std::vector<long long>& v) {
  std::fprintf(f, "[");
  for (size_t i = 0; i < v.size(); ++i) std::fprintf(f, "%s\"%lld ns\"", i ? ", " : "", v[i]);
  std::fprintf(f, "]");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CAPTURE.json [warmup runs] [measured runs]\n", argv[0]);
    return 2;
  }
  const char* out_path = argv[1];
  const int warmup = argc > 2 ? std::atoi(argv[2]) : 5;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 50;
  const int n = 1 << 24;
  const float a = 2.0f;

  // ---- Outside every timer: initialization -------------------------------------------
  // The first CUDA call creates the context (hundreds of ms): never inside a timer.
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver_version = 0;
  CHECK(cudaDriverGetVersion(&driver_version));
  void* ctx = nullptr;  // the runtime's (primary) context: cuCtxGetCurrent, looked up at run time
  if (void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    typedef int (*CtxGetCurrent)(void**);
    if (CtxGetCurrent get = (CtxGetCurrent)dlsym(libcuda, "cuCtxGetCurrent")) get(&ctx);
  }
  char uuid[64];
  {
    const unsigned char* u = (const unsigned char*)prop.uuid.bytes;
    std::snprintf(uuid, sizeof uuid,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                  u[12], u[13], u[14], u[15]);
  }

  // ---- Outside every timer: allocation ------------------------------------------------
  std::vector<float> hx(n), hy(n), result(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = (float)(i % 1024);  // small integers: every result is exact in float
    hy[i] = (float)(i % 7);
  }
  float *dx = nullptr, *dy = nullptr;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMalloc(&dy, n * sizeof(float)));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, end;  // timing enabled (the default flags)
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));

  // ---- Outside every timer: input copy -------------------------------------------------
  CHECK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  const int block = 256, grid = (n + block - 1) / block;
  std::vector<Run> all;

  // ---- Warm-up runs, then measured runs: the same code; warm-ups are kept but marked --
  for (int r = 0; r < warmup + runs; ++r) {
    // A synchronized start: nothing of ours is in flight when the timers start.
    CHECK(cudaStreamSynchronize(stream));

    Run run;
    run.t0 = host_now_ns();                      // submission AND completion timers start
    CHECK(cudaEventRecord(start, stream));       //   event record: inside submission
    saxpy<<<grid, block, 0, stream>>>(n, a, dx, dy);
    CHECK(cudaGetLastError());                   //   launch error check: inside submission
    CHECK(cudaEventRecord(end, stream));         //   event record: inside submission
    run.t1 = host_now_ns();                      // submission timer stops: NO completion claim

    CHECK(cudaEventSynchronize(end));            // the declared wait: covers the kernel
    run.t2 = host_now_ns();                      // completion timer stops after the wait

    float ms = 0.0f;                             // read only after `end` completed
    CHECK(cudaEventElapsedTime(&ms, start, end));
    run.device_ns = ms_to_ns(ms);
    all.push_back(run);
  }

  // ---- Outside every timer: result copy, validation, cleanup --------------------------
  CHECK(cudaMemcpy(result.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  long long wrong = 0;
  for (int i = 0; i < n; ++i) {
    float want = hy[i] + (float)(warmup + runs) * a * hx[i];  // y += a·x, once per run
    if (result[i] != want) ++wrong;
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(end));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));

  // ---- The capture: the last measured run in full, every run in the series -------------
  std::vector<long long> sub_w, sub_m, comp_w, comp_m, dev_w, dev_m;
  for (int r = 0; r < (int)all.size(); ++r) {
    const Run& x = all[r];
    bool w = r < warmup;
    (w ? sub_w : sub_m).push_back(x.t1 - x.t0);
    (w ? comp_w : comp_m).push_back(x.t2 - x.t0);
    (w ? dev_w : dev_m).push_back(x.device_ns);
  }
  const Run& last = all.back();
  const std::string boot = read_line("/proc/sys/kernel/random/boot_id");
  const std::string host = read_line("/proc/sys/kernel/hostname");

  FILE* f = std::fopen(out_path, "w");
  if (!f) {
    std::perror(out_path);
    return 2;
  }
  std::fprintf(f, "{\n  \"format\": \"worksheet-case\",\n  \"version\": 1,\n  \"name\": \"cuda-example\",\n");
  std::fprintf(f,
               "  \"description\": \"cuda-example/main.cu on %s: SAXPY over %d floats. The last measured run in "
               "full (host submission, host completion after a wait on the end event, device interval of the "
               "start/end events); all %d warm-up and %d measured runs in the series. Initialization, allocation, "
               "input copy and warm-up are before the timers; result copy, validation and cleanup after.\",\n",
               prop.name, n, warmup, runs);
  std::fprintf(f,
               "  \"provenance\": {\"tool\": \"cuda-example/main.cu\", \"device\": {\"name\": \"%s\", \"uuid\": "
               "\"%s\", \"context\": \"%p\", \"compute_capability\": \"%d.%d\", \"driver_cuda_version\": \"%d.%d\"}, "
               "\"host\": {\"hostname\": \"%s\", \"boot_id\": \"%s\"}, \"kernel\": \"saxpy, %d floats, grid %d x "
               "block %d\", \"validation\": {\"elements\": %d, \"wrong\": %lld}, "
               "\"outside_timers\": [\"initialization\", \"allocation\", \"input copy\", \"warm-up\", \"result "
               "copy\", \"validation\", \"cleanup\"], \"runs\": {\"warmup\": %d, \"measured\": %d}},\n",
               prop.name, uuid, ctx, prop.major, prop.minor, driver_version / 1000,
               (driver_version % 1000) / 10, host.c_str(), boot.c_str(), n, grid, block, n, wrong, warmup,
               runs);
  std::fprintf(f,
               "  \"clocks\": [\n"
               "    {\"id\": \"host\", \"domain\": \"host\", \"instance\": \"boot %s / CLOCK_MONOTONIC "
               "(std::chrono::steady_clock)\"},\n"
               "    {\"id\": \"gpu\", \"domain\": \"device\", \"instance\": \"%s / context %p / offsets from the "
               "last run's start event\"}\n  ],\n",
               boot.c_str(), uuid, ctx);
  std::fprintf(f, "  \"streams\": [{\"id\": \"main\", \"clock\": \"gpu\", \"device\": \"%s\"}],\n", uuid);
  std::fprintf(f,
               "  \"events\": [\n"
               "    {\"id\": \"start\", \"stream\": \"main\", \"timing\": true, \"state\": \"completed\", \"at\": \"0 ns\"},\n"
               "    {\"id\": \"end\", \"stream\": \"main\", \"timing\": true, \"state\": \"completed\", \"at\": \"%lld ns\"}\n  ],\n",
               last.device_ns);
  std::fprintf(f,
               "  \"phases\": [{\"id\": \"saxpy\", \"label\": \"saxpy kernel, placed between its events\", "
               "\"stream\": \"main\", \"start\": \"0 ns\", \"end\": \"%lld ns\"}],\n",
               last.device_ns);
  std::fprintf(f,
               "  \"program\": [\n"
               "    {\"op\": \"timer-start\", \"timer\": \"completion\", \"clock\": \"host\", \"at\": \"%lld ns\"},\n"
               "    {\"op\": \"timer-start\", \"timer\": \"submission\", \"clock\": \"host\", \"at\": \"%lld ns\"},\n"
               "    {\"op\": \"record\", \"event\": \"start\"},\n"
               "    {\"op\": \"launch\", \"phase\": \"saxpy\"},\n"
               "    {\"op\": \"record\", \"event\": \"end\"},\n"
               "    {\"op\": \"timer-stop\", \"timer\": \"submission\", \"clock\": \"host\", \"at\": \"%lld ns\"},\n"
               "    {\"op\": \"host-wait\", \"id\": \"wait-end\", \"event\": \"end\", \"clock\": \"host\", \"at\": \"%lld ns\"},\n"
               "    {\"op\": \"timer-stop\", \"timer\": \"completion\", \"clock\": \"host\", \"at\": \"%lld ns\"}\n  ],\n",
               last.t0, last.t0, last.t1, last.t2, last.t2);
  std::fprintf(f, "  \"series\": [\n");
  const char* ids[3] = {"submission", "host-completion", "device-interval"};
  const std::vector<long long>* w[3] = {&sub_w, &comp_w, &dev_w};
  const std::vector<long long>* m[3] = {&sub_m, &comp_m, &dev_m};
  for (int k = 0; k < 3; ++k) {
    std::fprintf(f, "    {\"id\": \"%s-runs\", \"warmup\": ", ids[k]);
    json_ns_list(f, *w[k]);
    std::fprintf(f, ", \"measured\": ");
    json_ns_list(f, *m[k]);
    std::fprintf(f, "}%s\n", k < 2 ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"questions\": [\n");
  std::fprintf(f,
               "    {\"id\": \"submission\", \"kind\": \"submission\", \"timer\": \"submission\", "
               "\"expect\": {\"verdict\": \"known\", \"value\": \"%lld ns\"}},\n",
               last.t1 - last.t0);
  std::fprintf(f,
               "    {\"id\": \"host-completion\", \"kind\": \"host-completion\", \"timer\": \"completion\", "
               "\"expect\": {\"verdict\": \"known\", \"value\": \"%lld ns\"}},\n",
               last.t2 - last.t0);
  std::fprintf(f,
               "    {\"id\": \"device-interval\", \"kind\": \"device-interval\", \"start\": \"start\", \"end\": "
               "\"end\", \"expect\": {\"verdict\": \"known\", \"value\": \"%lld ns\"}},\n",
               last.device_ns);
  std::fprintf(f,
               "    {\"id\": \"completion-minus-device\", \"kind\": \"difference\", \"minuend\": "
               "\"host-completion\", \"subtrahend\": \"device-interval\", \"expect\": {\"verdict\": \"known\", "
               "\"value\": \"%lld ns\", \"attribution\": \"not-causal\"}},\n",
               (last.t2 - last.t0) - last.device_ns);
  for (int k = 0; k < 3; ++k)
    std::fprintf(f, "    {\"id\": \"%s-steady\", \"kind\": \"steady-state\", \"series\": \"%s-runs\"}%s\n", ids[k],
                 ids[k], k < 2 ? "," : "");
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);

  // ---- What it prints: median / P90 / max per boundary, and the validation ------------
  std::printf("%s (%s), driver CUDA %d.%d, SAXPY %d floats, %d warm-up + %d measured runs\n", prop.name, uuid,
              driver_version / 1000, (driver_version % 1000) / 10, n, warmup, runs);
  std::printf("| boundary | clock | median | P90 | max |\n|---|---|---|---|---|\n");
  const char* names[3] = {"host submission", "host completion", "device interval"};
  const char* clocks[3] = {"host", "host", "gpu events"};
  for (int k = 0; k < 3; ++k)
    std::printf("| %s | %s | %.3f us | %.3f us | %.3f us |\n", names[k], clocks[k],
                nearest_rank(*m[k], 50) / 1e3, nearest_rank(*m[k], 90) / 1e3, nearest_rank(*m[k], 100) / 1e3);
  std::printf("validation: %lld of %d elements wrong\nwrote %s\n", wrong, n, out_path);
  return wrong == 0 ? 0 : 1;
}
