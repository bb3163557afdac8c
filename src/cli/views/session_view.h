// What `corral session` prints once its session is placed: where it runs and how to reach
// it, as a pure function of GET /v1/jobs/{id}'s answer (tests/cli/views_test.cc).
//
// Corral has no shell into a worker: the session's command runs on its node with the
// GPUs in CUDA_VISIBLE_DEVICES, and what it prints (a notebook server's URL, say) is read
// with `corral logs`. The text says that and nothing more.
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace corral::cli {

// The placed session `job`: its nodes and GPUs, and the commands that reach and end it.
std::string session_text(const nlohmann::json& job);

// One line for a session still waiting: its reason and queue position, if any.
std::string session_wait_text(const nlohmann::json& job);

}  // namespace corral::cli
