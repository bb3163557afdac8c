#include "cli/views/session_view.h"

#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace corral::cli {
namespace {

std::string str(const nlohmann::json& doc, const char* key) {
  const auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
}

std::int64_t num(const nlohmann::json& doc, const char* key) {
  const auto it = doc.find(key);
  return it != doc.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

}  // namespace

std::string session_text(const nlohmann::json& job) {
  const std::string id = std::to_string(num(job, "id"));
  std::string out = "session " + id + " (" + str(job, "name") + ", tenant " + str(job, "tenant") +
                    ") is " + str(job, "phase");
  const auto alloc = job.find("allocation");
  std::map<std::string, std::vector<std::int64_t>> by_node;
  if (alloc != job.end() && alloc->is_object()) {
    out += " on " + str(*alloc, "gpuType");
    for (const auto& g : alloc->value("gpus", nlohmann::json::array())) {
      by_node[str(g, "node")].push_back(num(g, "index"));
    }
  }
  out += "\n";
  for (const auto& [node, indices] : by_node) {
    out += "  node " + node + ": GPU" + (indices.size() > 1 ? "s " : " ");
    for (std::size_t i = 0; i < indices.size(); ++i) {
      out += (i == 0 ? "" : ",") + std::to_string(indices[i]);
    }
    out += "\n";
  }
  out += "Its command runs there with those GPUs in CUDA_VISIBLE_DEVICES and CORRAL_JOB_ID=" + id +
         ".\n";
  out += "  corral logs " + id + "      what it prints (a notebook server's URL and token)\n";
  out += "  corral job " + id + "       its state and events (an idle warning shows here)\n";
  out += "  corral cancel " + id + "    end it and give its GPUs back\n";
  out += "It is reclaimed when its GPUs stay idle (session_idle_warning first).\n";
  return out;
}

std::string session_wait_text(const nlohmann::json& job) {
  std::string out = "session " + std::to_string(num(job, "id")) + " " + str(job, "phase");
  if (const std::int64_t pos = num(job, "queuePosition"); pos > 0) {
    out += ", position " + std::to_string(pos);
  }
  if (const std::string reason = str(job, "reason"); !reason.empty()) out += ": " + reason;
  return out;
}

}  // namespace corral::cli
