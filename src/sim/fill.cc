#include "sim/fill.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "sched/check.h"
#include "sched/decide.h"
#include "sim/rng.h"
#include "sim/traces/csv.h"

namespace corral::sim {
namespace {

// The rows of a CSV file after its header, with the header's column positions.
struct CsvFile {
  std::string text;
  std::map<std::string, std::size_t, std::less<>> columns;
};

core::Result<CsvFile> read_csv(const std::string& path, std::vector<std::string_view> need) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::invalid_argument(path, "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  CsvFile out{.text = text.str()};
  const std::string_view all = out.text;
  const std::vector<std::string_view> header = split_csv_line(all.substr(0, all.find('\n')));
  for (std::size_t i = 0; i < header.size(); ++i) out.columns[std::string(header[i])] = i;
  for (std::string_view name : need) {
    if (!out.columns.contains(name)) {
      return core::invalid_argument(path, fmt::format("has no column {}", name));
    }
  }
  return out;
}

// Calls `row(line_no, cells)` for each data row; stops at the first error it returns.
template <typename Row>
core::Status each_row(const CsvFile& csv, Row row) {
  const std::string_view all = csv.text;
  std::size_t pos = all.find('\n');
  for (std::size_t line_no = 2; pos != std::string_view::npos && pos + 1 < all.size(); ++line_no) {
    const std::size_t end = all.find('\n', pos + 1);
    std::string_view line =
        all.substr(pos + 1, end == std::string_view::npos ? end : end - pos - 1);
    pos = end;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (core::Status s = row(line_no, split_csv_line(line)); !s.ok()) return s;
  }
  return core::ok_status();
}

// A non-negative integer cell, or an error naming where.
core::Status integer(const CsvFile& csv, const std::vector<std::string_view>& cells,
                     std::string_view column, const std::string& where, std::int64_t& out) {
  const std::size_t at = csv.columns.find(column)->second;
  const std::string_view cell = at < cells.size() ? cells[at] : std::string_view();
  const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), out);
  if (ec != std::errc() || ptr != cell.data() + cell.size() || out < 0) {
    return core::invalid_argument(fmt::format("{}: column {}", where, column),
                                  fmt::format("must be an integer >= 0, got '{}'", cell));
  }
  return core::ok_status();
}

std::string_view cell(const CsvFile& csv, const std::vector<std::string_view>& cells,
                      std::string_view column) {
  const std::size_t at = csv.columns.find(column)->second;
  return at < cells.size() ? cells[at] : std::string_view();
}

}  // namespace

std::int64_t FillTrace::capacity_milli() const {
  std::int64_t gpus = 0;
  for (const core::Node& n : nodes) gpus += static_cast<std::int64_t>(n.gpus.size());
  return 1000 * gpus;
}

core::Result<FillTrace> load_fill_trace(const std::string& nodes_csv, const std::string& pods_csv) {
  FillTrace trace;
  auto nodes = read_csv(nodes_csv, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!nodes.ok()) return nodes.status();
  std::map<std::string, bool> models;
  core::Status status = each_row(*nodes, [&](std::size_t line, const auto& cells) {
    const std::string where = fmt::format("{}:{}", nodes_csv, line);
    std::int64_t cpu_milli = 0, memory = 0, gpus = 0;
    CORRAL_RETURN_IF_ERROR(integer(*nodes, cells, "cpu_milli", where, cpu_milli));
    CORRAL_RETURN_IF_ERROR(integer(*nodes, cells, "memory_mib", where, memory));
    CORRAL_RETURN_IF_ERROR(integer(*nodes, cells, "gpu", where, gpus));
    if (gpus > sched::kMaxGpusPerNode) {
      return core::invalid_argument(where + ": column gpu",
                                    fmt::format("at most 64, got {}", gpus));
    }
    if (gpus == 0) return core::ok_status();  // GPU nodes only, as the paper
    const std::string model(cell(*nodes, cells, "model"));
    if (model.empty()) return core::invalid_argument(where + ": column model", "is empty");
    models[model] = true;
    core::Node n{.id = core::NodeId(std::string(cell(*nodes, cells, "sn"))),
                 .cpus = static_cast<std::int32_t>(cpu_milli),
                 .memory_mib = memory};
    // One leaf per 32 nodes: the experiment places single-node pods, so only the names
    // need to be valid.
    const std::string leaf = fmt::format("leaf-{}", trace.nodes.size() / 32);
    n.labels = {.cluster = "openb", .spine = "spine-0", .leaf = leaf, .rack = leaf};
    for (std::int32_t i = 0; i < gpus; ++i) {
      n.gpus.push_back({.index = i, .type = core::GpuTypeId(model)});
    }
    trace.nodes.push_back(std::move(n));
    return core::ok_status();
  });
  if (!status.ok()) return status;
  for (const auto& [model, _] : models) trace.gpu_types.push_back({.id = core::GpuTypeId(model)});

  auto pods = read_csv(pods_csv, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli",
                                  "gpu_spec", "creation_time"});
  if (!pods.ok()) return pods.status();
  std::vector<std::pair<std::int64_t, FillPod>> by_creation;
  status = each_row(*pods, [&](std::size_t line, const auto& cells) {
    const std::string where = fmt::format("{}:{}", pods_csv, line);
    std::int64_t cpu_milli = 0, memory = 0, gpus = 0, milli = 0, created = 0;
    CORRAL_RETURN_IF_ERROR(integer(*pods, cells, "cpu_milli", where, cpu_milli));
    CORRAL_RETURN_IF_ERROR(integer(*pods, cells, "memory_mib", where, memory));
    CORRAL_RETURN_IF_ERROR(integer(*pods, cells, "num_gpu", where, gpus));
    CORRAL_RETURN_IF_ERROR(integer(*pods, cells, "gpu_milli", where, milli));
    CORRAL_RETURN_IF_ERROR(integer(*pods, cells, "creation_time", where, created));
    if (gpus == 0) {
      ++trace.cpu_only_pods;
      return core::ok_status();
    }
    if (gpus > sched::kMaxGpusPerNode || milli < 1 || milli > 1000 || (gpus > 1 && milli < 1000)) {
      return core::invalid_argument(
          where + ": column gpu_milli",
          fmt::format("a pod asks for whole GPUs (1000 each) or a share of one (1-999), got "
                      "{} GPUs at {}",
                      gpus, milli));
    }
    FillPod pod{.name = std::string(cell(*pods, cells, "name")),
                .gpus = static_cast<std::int32_t>(gpus),
                .gpu_milli = milli < 1000 ? static_cast<std::int32_t>(milli) : 0,
                .cpus = static_cast<std::int32_t>(cpu_milli),
                .memory_mib = memory};
    const std::string_view spec = cell(*pods, cells, "gpu_spec");
    for (std::size_t start = 0; !spec.empty() && start <= spec.size();) {
      const std::size_t bar = std::min(spec.find('|', start), spec.size());
      const std::string model(spec.substr(start, bar - start));
      if (!models.contains(model)) {
        return core::invalid_argument(where + ": column gpu_spec",
                                      fmt::format("no GPU node has model {}", model));
      }
      pod.gpu_types.push_back(model);
      start = bar + 1;
    }
    by_creation.emplace_back(created, std::move(pod));
    return core::ok_status();
  });
  if (!status.ok()) return status;
  std::stable_sort(by_creation.begin(), by_creation.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [_, pod] : by_creation) trace.pods.push_back(std::move(pod));
  if (trace.nodes.empty() || trace.pods.empty()) {
    return core::invalid_argument(pods_csv, "no GPU nodes or no GPU pods to place");
  }
  return trace;
}

core::Result<FillRun> run_fill(const FillTrace& trace, const sched::SchedulerConfig& config,
                               const std::string& placement, const FillOptions& options) {
  const core::TenantId tenant("openb");
  sched::SnapshotInput fleet{
      .gpu_types = trace.gpu_types, .nodes = trace.nodes, .tenants = {core::Tenant{.id = tenant}}};
  auto built = sched::build_snapshot(std::move(fleet));
  if (!built.ok()) return built.status();
  sched::ClusterSnapshot snapshot = std::move(*built);

  // The order: the list (shuffled with the seed, or as created), then draws from it.
  Rng rng(options.seed);
  const auto draw = [&](std::size_t n) { return static_cast<std::size_t>(rng.next() % n); };
  std::vector<std::size_t> order(trace.pods.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (options.shuffle) {
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[draw(i)]);
  }

  const std::int64_t capacity = trace.capacity_milli();
  const auto limit = static_cast<std::int64_t>(options.inflate * static_cast<double>(capacity));
  FillRun run{.placement = placement, .seed = options.seed};
  std::int64_t arrived = 0, allocated = 0;
  std::vector<sched::RunningProgress> progress;  // every running job, as the delta needs
  std::optional<core::JobId> last_pending;
  std::optional<sched::RunningJob> last_started;
  std::map<sched::GpuRef, std::int64_t> shared;  // what the shares placed hold of each GPU
  const core::Time now{};
  for (std::size_t k = 0;; ++k) {
    const bool listed = k < order.size();
    const FillPod& pod = trace.pods[listed ? order[k] : draw(trace.pods.size())];
    if (!listed && arrived + pod.milli() > limit) break;
    sched::JobRequest r{.id = core::JobId(static_cast<std::int64_t>(k + 1)),
                        .tenant = tenant,
                        .gpus = pod.gpus,
                        .gpu_milli = pod.gpu_milli,
                        .cpus_per_gpu = (pod.cpus + pod.gpus - 1) / pod.gpus,
                        .memory_per_gpu_mib = (pod.memory_mib + pod.gpus - 1) / pod.gpus};
    for (const std::string& t : pod.gpu_types) r.gpu_types.emplace_back(t);
    sched::JobsDelta delta{.progress = progress};
    if (last_pending) delta.dequeued.push_back(*last_pending);
    if (last_started) {
      delta.started.push_back(std::move(*last_started));
      progress.push_back({.id = delta.started.back().request.id});
    }
    last_started.reset();
    delta.queued.push_back({.request = r, .queued_at = now});
    last_pending = r.id;
    auto next = sched::rebuild_snapshot(std::move(snapshot), std::move(delta));
    if (!next.ok()) return next.status();
    snapshot = std::move(*next);

    const sched::Decisions d = sched::decide(snapshot, config, now);
    if (options.check_every > 0 && k % static_cast<std::size_t>(options.check_every) == 0) {
      if (const auto broken = sched::check(snapshot, d, config, now); !broken.empty()) {
        return core::internal_error(fmt::format("pod {}: {}", pod.name, broken.front()));
      }
    }
    if (!d.placements.empty()) {
      last_started =
          sched::RunningJob{.request = r, .started_at = now, .gpus = d.placements[0].gpus};
      if (pod.gpu_milli > 0) shared[d.placements[0].gpus.front()] += pod.gpu_milli;
      allocated += pod.milli();
      ++run.placed;
    } else {
      ++run.dropped;
    }
    arrived += pod.milli();
    while (static_cast<std::int64_t>(run.unallocated.size()) * capacity <= arrived * 100) {
      run.unallocated.push_back(1.0 -
                                static_cast<double>(allocated) / static_cast<double>(capacity));
    }
  }
  // Where the unallocated capacity is at the end: left over on shared GPUs, or whole.
  std::int64_t leftover = 0;
  for (const auto& [gpu, used] : shared) leftover += 1000 - used;
  run.leftover_on_shared = static_cast<double>(leftover) / static_cast<double>(capacity);
  return run;
}

}  // namespace corral::sim
