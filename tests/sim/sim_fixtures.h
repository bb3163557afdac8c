// Small fleets and trace jobs for the simulator's hand-checked tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/fleet.h"
#include "sim/traces/workload.h"

namespace corral::sim::testing {

// The shared folder beside the repository (traces, ARCHITECTURE.md): $CORRAL_SHARED when
// set, else the checkout's ../shared (CMake passes its absolute form as CORRAL_SHARED_DIR),
// so a clone anywhere finds it the same way the scripts and docs do.
inline std::string shared_dir() {
  const char* env = std::getenv("CORRAL_SHARED");
  return env != nullptr && *env != '\0' ? env : CORRAL_SHARED_DIR;
}

// The applications a Pollux or Sia profile folder must hold.
inline constexpr const char* kPolluxApps[] = {"bert",     "cifar10",     "ncf",
                                              "imagenet", "deepspeech2", "yolov3"};

// Validation files for batches 32 and 64 in `app_dir`: 100 epochs of 10 steps of progress
// each, grad_sqr = grad_var = 1 (a batch's gain depends only on its size).
inline void write_flat_validation(const std::filesystem::path& app_dir) {
  for (int batch : {32, 64}) {
    std::ofstream v(app_dir / ("validation-" + std::to_string(batch) + ".csv"));
    v << "progress,iteration,metric,grad_sqr,grad_var\n";
    for (int e = 1; e <= 100; ++e) v << 10 * e << "," << 10 * e << ",0.5,1,1\n";
  }
}

// One pool of `nodes` × `gpus_per_node` GPUs of `gpu_type`; every workload tenant gets
// weight 1 and no guarantee.
inline Fleet pool_fleet(int nodes, int gpus_per_node, const std::string& gpu_type) {
  auto f = parse_fleet("name: test\npools:\n  - {name: n, gpu_type: " + gpu_type +
                           ", nodes: " + std::to_string(nodes) + ", gpus_per_node: " +
                           std::to_string(gpus_per_node) + "}\ntrace_tenants: {guarantee: none}\n",
                       "test.yaml");
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return *f;
}

// A rigid job of `gpus` GPUs submitted at `submit_s` that runs `duration_s` when packed.
inline TraceJob trace_job(const std::string& name, const std::string& tenant, double submit_s,
                          int gpus, double duration_s) {
  return {.name = name,
          .tenant = core::TenantId(tenant),
          .submit_ms = std::llround(submit_s * 1000),
          .gpus = gpus,
          .duration_ms = std::llround(duration_s * 1000)};
}

}  // namespace corral::sim::testing
