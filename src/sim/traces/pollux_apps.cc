// The Pollux artifact's application profiles (placements, scalability and validation
// CSVs per application, per GPU type for Sia) and the goodput model over them: a job's
// step time at a placement and batch, its work in steps, and the batch an elastic job's
// oracle picks at each size (internal/pollux_apps.h).
#include "sim/internal/pollux_apps.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace corral::sim::pollux {

namespace fs = std::filesystem;

std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  return cells;
}

// The artifact's applications.py: epochs each application trains for, and the one
// per-GPU batch limit it sets by hand (the rest come from the profiles).
struct AppConstants {
  const char* name;
  std::int32_t max_epochs;
  std::int32_t max_local_bsz;  // 0: the largest profiled
};
constexpr AppConstants kApps[] = {{"bert", 2, 0},      {"cifar10", 100, 0},    {"ncf", 10, 0},
                                  {"imagenet", 90, 0}, {"deepspeech2", 80, 0}, {"yolov3", 50, 8}};
constexpr std::int32_t kMaxProfiledNodes = 16;

using Row = std::vector<double>;

// Rows of `columns`, in that order, whatever order the file's header gives them in (the
// Sia files reorder them from one GPU type to the next).
core::Result<std::vector<Row>> read_csv(const fs::path& path,
                                        std::initializer_list<std::string_view> columns) {
  std::ifstream in(path);
  if (!in) return core::invalid_argument("workload", fmt::format("cannot open {}", path.string()));
  std::vector<Row> rows;
  std::vector<std::size_t> order;  // file column of each wanted column
  std::string line;
  std::size_t line_no = 0;
  std::size_t width = 0;  // the header's
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
    if (line.empty()) continue;
    const std::vector<std::string> cells = csv_cells(line);
    if (line_no == 1) {
      width = cells.size();
      for (const std::string_view want : columns) {
        const auto it = std::find(cells.begin(), cells.end(), want);
        if (it == cells.end()) {
          return core::invalid_argument(
              "workload", fmt::format("{}:1: header lacks column '{}'", path.string(), want));
        }
        order.push_back(static_cast<std::size_t>(it - cells.begin()));
      }
      continue;
    }
    if (cells.size() != width) {
      return core::invalid_argument(
          "workload", fmt::format("{}:{}: expected {} columns, got {}", path.string(), line_no,
                                  width, cells.size()));
    }
    Row row;
    for (const std::size_t c : order) {
      double v = 0;
      const std::string& text = cells[c];
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
        return core::invalid_argument(
            "workload", fmt::format("{}:{}: column {}: not a number: '{}'", path.string(), line_no,
                                    c + 1, text));
      }
      row.push_back(v);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

struct Point {
  double bsz, step, sync;
};

// Linear in local batch over points sorted by batch; clamped at the ends.
std::pair<double, double> interp_bsz(const std::vector<Point>& pts, double bsz) {
  if (bsz <= pts.front().bsz) return {pts.front().step, pts.front().sync};
  if (bsz >= pts.back().bsz) return {pts.back().step, pts.back().sync};
  const auto hi = std::lower_bound(pts.begin(), pts.end(), bsz,
                                   [](const Point& p, double b) { return p.bsz < b; });
  const auto lo = hi - 1;
  const double f = (bsz - lo->bsz) / (hi->bsz - lo->bsz);
  return {lo->step + f * (hi->step - lo->step), lo->sync + f * (hi->sync - lo->sync)};
}

// Linear between (x0, y0) and (x1, y1) at x; y0 when x0 == x1.
std::pair<double, double> lerp(double x0, std::pair<double, double> y0, double x1,
                               std::pair<double, double> y1, double x) {
  if (x1 == x0) return y0;
  const double f = (x - x0) / (x1 - x0);
  return {y0.first + f * (y1.first - y0.first), y0.second + f * (y1.second - y0.second)};
}

// One way to run a global batch on n GPUs: per-GPU batch, accumulation steps, and per
// epoch the steps of work (progress / gain) it needs at that batch.
struct Choice {
  std::int32_t atomic_bsz = 0;
  std::int32_t accum_steps = 0;
  std::vector<double> steps_by_epoch;
};

struct Validation {
  std::int32_t batch;
  std::vector<Row> rows;  // progress, iteration, metric, grad_sqr, grad_var
};

class App {
 public:
  std::string name;
  std::int32_t max_epochs = 0;
  std::int32_t init_batch = 0, max_batch = 0;
  double min_local = 0, max_local = 0;
  std::map<std::int64_t, std::vector<Point>> by_placement;          // id: digits
  std::map<std::pair<int, int>, std::vector<Point>> by_nodes_gpus;  // means + scalability
  std::vector<Validation> validation;                               // by batch
  // For an elastic job on n GPUs (index n, 1..kMaxElasticGpus): the batch splits the
  // oracle chooses among (batch_choices()).
  std::vector<std::vector<Choice>> choices;

  // (step, sync) seconds at a placement (GPUs per node, zeros dropped) and local batch.
  std::pair<double, double> throughput(std::vector<std::int32_t> p, double bsz) const {
    std::erase(p, 0);
    // The artifact's key: the lexicographically smallest rotation, as decimal digits.
    std::vector<std::int32_t> best = p;
    for (std::size_t i = 1; i < p.size(); ++i) {
      std::vector<std::int32_t> r(p.begin() + static_cast<std::ptrdiff_t>(i), p.end());
      r.insert(r.end(), p.begin(), p.begin() + static_cast<std::ptrdiff_t>(i));
      best = std::min(best, r);
    }
    bool digits = best.size() <= 18;
    std::int64_t id = 0;
    for (std::int32_t g : best) {
      digits = digits && g <= 9;
      if (!digits) break;  // not a profiled id (and more digits would overflow)
      id = id * 10 + g;
    }
    if (digits) {
      if (const auto it = by_placement.find(id); it != by_placement.end()) {
        return interp_bsz(it->second, bsz);
      }
    }
    const int nodes = std::min(static_cast<int>(p.size()), kMaxProfiledNodes);
    int gpus = 0;
    for (std::int32_t g : p) gpus += g;
    return by_shape(nodes, gpus, bsz);
  }

 private:
  // Not profiled as such: linear in GPUs among the shapes with this node count, then
  // linear in node count between the nearest profiled counts.
  std::pair<double, double> at_nodes(int nodes, int gpus, double bsz) const {
    const auto lo = by_nodes_gpus.lower_bound({nodes, 0});
    const auto end = by_nodes_gpus.lower_bound({nodes + 1, 0});
    if (lo == end) return {-1, -1};
    auto hi = by_nodes_gpus.lower_bound({nodes, gpus});
    if (hi == end) return interp_bsz(std::prev(end)->second, bsz);
    if (hi->first.second == gpus || hi == lo) return interp_bsz(hi->second, bsz);
    const auto below = std::prev(hi);
    return lerp(below->first.second, interp_bsz(below->second, bsz), hi->first.second,
                interp_bsz(hi->second, bsz), gpus);
  }
  std::pair<double, double> by_shape(int nodes, int gpus, double bsz) const {
    int n_lo = nodes, n_hi = nodes;
    while (n_lo > 0 && at_nodes(n_lo, gpus, bsz).first < 0) --n_lo;
    while (n_hi <= kMaxProfiledNodes && at_nodes(n_hi, gpus, bsz).first < 0) ++n_hi;
    if (n_lo == 0) return at_nodes(n_hi, gpus, bsz);
    if (n_hi > kMaxProfiledNodes) return at_nodes(n_lo, gpus, bsz);
    return lerp(n_lo, at_nodes(n_lo, gpus, bsz), n_hi, at_nodes(n_hi, gpus, bsz), nodes);
  }
};

// `suffix`: "" for the Pollux files, "-<cluster>" for one GPU type's Sia files.
core::Result<App> load_app(const fs::path& dir, const AppConstants& c, const std::string& suffix) {
  App app;
  app.name = c.name;
  app.max_epochs = c.max_epochs;
  CORRAL_ASSIGN_OR_RETURN(std::vector<Row> placements,
                          read_csv(dir / ("placements" + suffix + ".csv"),
                                   {"placement", "local_bsz", "step_time", "sync_time"}));
  CORRAL_ASSIGN_OR_RETURN(
      std::vector<Row> scalability,
      read_csv(dir / ("scalability" + suffix + ".csv"),
               {"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"}));
  if (placements.empty()) {
    return core::invalid_argument("workload", fmt::format("{}: no placements", dir.string()));
  }
  std::map<std::tuple<int, int, double>, std::pair<Point, int>> means;
  app.min_local = placements[0][1];
  app.max_local = placements[0][1];
  for (const Row& r : placements) {
    const auto id = static_cast<std::int64_t>(r[0]);
    app.by_placement[id].push_back({r[1], r[2], r[3]});
    app.min_local = std::min(app.min_local, r[1]);
    app.max_local = std::max(app.max_local, r[1]);
    int nodes = 0, gpus = 0;
    for (std::int64_t d = id; d > 0; d /= 10) {
      ++nodes;
      gpus += static_cast<int>(d % 10);
    }
    auto& [sum, count] = means[{nodes, gpus, r[1]}];
    sum.bsz = r[1];
    sum.step += r[2];
    sum.sync += r[3];
    ++count;
  }
  if (c.max_local_bsz > 0) app.max_local = c.max_local_bsz;
  for (const auto& [key, value] : means) {
    const auto& [sum, count] = value;
    app.by_nodes_gpus[{std::get<0>(key), std::get<1>(key)}].push_back(
        {sum.bsz, sum.step / count, sum.sync / count});
  }
  for (const Row& r : scalability) {
    app.by_nodes_gpus[{static_cast<int>(r[0]), static_cast<int>(r[1])}].push_back(
        {r[2], r[3], r[4]});
  }
  const auto by_bsz = [](const Point& a, const Point& b) { return a.bsz < b.bsz; };
  for (auto& [id, pts] : app.by_placement) std::sort(pts.begin(), pts.end(), by_bsz);
  for (auto& [shape, pts] : app.by_nodes_gpus) std::sort(pts.begin(), pts.end(), by_bsz);
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (!file.starts_with("validation-") || !file.ends_with(".csv")) continue;
    const std::int32_t batch = std::stoi(file.substr(11, file.size() - 15));
    CORRAL_ASSIGN_OR_RETURN(
        std::vector<Row> rows,
        read_csv(entry.path(), {"progress", "iteration", "metric", "grad_sqr", "grad_var"}));
    if (static_cast<std::int32_t>(rows.size()) < c.max_epochs) {
      return core::invalid_argument(
          "workload", fmt::format("{}: {} epochs, {} needed", entry.path().string(), rows.size(),
                                  c.max_epochs));
    }
    app.validation.push_back({batch, std::move(rows)});
  }
  if (app.validation.empty()) {
    return core::invalid_argument("workload", fmt::format("{}: no validation-*.csv", dir.string()));
  }
  std::sort(app.validation.begin(), app.validation.end(),
            [](const Validation& a, const Validation& b) { return a.batch < b.batch; });
  app.init_batch = app.validation.front().batch;
  app.max_batch = app.validation.back().batch;
  return app;
}

// The artifact's Job.update_local_bsz() for a fixed global batch.
void local_batch(const App& app, std::int32_t gpus, std::int32_t batch, PolluxJobModel& m) {
  const auto local = static_cast<std::int32_t>(std::ceil(static_cast<double>(batch) / gpus - 1e-8));
  std::int32_t accum = static_cast<std::int32_t>(std::ceil(local / app.max_local - 1e-8)) - 1;
  if (gpus == 1 && batch > app.init_batch) accum = std::max(1, accum);
  std::int32_t atomic =
      static_cast<std::int32_t>(std::ceil(static_cast<double>(local) / (accum + 1) - 1e-8));
  const std::int32_t count = gpus * (accum + 1);
  atomic = std::min(atomic, app.max_batch / count);
  m.atomic_bsz = atomic;
  m.accum_steps = accum;
}

// The progress the application's epoch `e` (0-based) needs: the fastest batch size's, as
// the artifact takes it.
double epoch_progress(const App& app, std::int32_t e) {
  const auto done = [&](std::int32_t epoch) {
    if (epoch == 0) return 0.0;
    double p = app.validation.front().rows[epoch - 1][0];
    for (const Validation& v : app.validation) p = std::min(p, v.rows[epoch - 1][0]);
    return p;
  };
  return done(e + 1) - done(e);
}

// The statistical gain of global batch `batch` in epoch `e`: (var + sqr) / (var / scale +
// sqr), the gradient statistics interpolated between the validated batch sizes.
double gain(const App& app, std::int32_t batch, std::int32_t e) {
  const double b = std::clamp<double>(batch, app.init_batch, app.max_batch);
  auto hi = app.validation.begin();
  while (hi != app.validation.end() && hi->batch < b) ++hi;
  if (hi == app.validation.end()) --hi;
  const auto lo = hi->batch > b && hi != app.validation.begin() ? hi - 1 : hi;
  double sqr = lo->rows[e][3], var = lo->rows[e][4];
  if (lo != hi) {
    const double f = (b - lo->batch) / (hi->batch - lo->batch);
    sqr += f * (hi->rows[e][3] - sqr);
    var += f * (hi->rows[e][4] - var);
  }
  const double scale = static_cast<double>(batch) / app.init_batch;
  return (var + sqr) / (var / scale + sqr);
}

// W: sum over the epochs of the progress each needs divided by the statistical gain of
// the job's batch in that epoch.
double work_steps(const App& app, std::int32_t batch) {
  double w = 0;
  for (std::int32_t e = 0; e < app.max_epochs; ++e)
    w += epoch_progress(app, e) / gain(app, batch, e);
  return w;
}

double step_seconds(const App& app, const PolluxJobModel& m,
                    std::span<const std::int32_t> gpus_per_node) {
  const auto [step, sync] =
      app.throughput({gpus_per_node.begin(), gpus_per_node.end()}, m.atomic_bsz);
  return step + (step - sync) * m.accum_steps;
}

template <typename T>
const T& for_type(const std::map<core::GpuTypeId, T>& by_type, const core::GpuTypeId& type) {
  const auto it = by_type.find(type);
  return it != by_type.end() ? it->second : by_type.begin()->second;
}

template <typename T>
std::vector<core::GpuTypeId> types_of(const std::map<core::GpuTypeId, T>& by_type) {
  std::vector<core::GpuTypeId> out;
  for (const auto& [type, value] : by_type) {
    if (!type.value.empty()) out.push_back(type);
  }
  return out;
}

class PolluxProfile final : public RuntimeProfile {
 public:
  explicit PolluxProfile(std::map<core::GpuTypeId, TypedModel> models)
      : models_(std::move(models)) {}
  double seconds(const core::GpuTypeId& gpu_type,
                 std::span<const std::int32_t> gpus_per_node) const override {
    const TypedModel& t = for_type(models_, gpu_type);
    return t.m.work_steps * step_seconds(*t.app, t.m, gpus_per_node);
  }
  std::vector<core::GpuTypeId> gpu_types() const override { return types_of(models_); }

 private:
  std::map<core::GpuTypeId, TypedModel> models_;
};

Choice make_choice(const App& app, const PolluxJobModel& m, std::int32_t gpus) {
  Choice c{.atomic_bsz = m.atomic_bsz, .accum_steps = m.accum_steps};
  const std::int32_t batch = gpus * m.atomic_bsz * (m.accum_steps + 1);
  for (std::int32_t e = 0; e < app.max_epochs; ++e) {
    c.steps_by_epoch.push_back(epoch_progress(app, e) / gain(app, batch, e));
  }
  return c;
}

// The splits the artifact's GoodputFunction.optimize(accumulation=True) weighs on `gpus`
// GPUs: 50 global batch sizes spaced geometrically from max(init batch, smallest per-GPU
// batch x gpus) to the largest batch, each split into per-GPU batch and accumulation
// steps as it splits them, kept when the per-GPU batch is within the profiled range; then
// capped as Job.update_local_bsz() caps them.
std::vector<Choice> batch_choices(const App& app, std::int32_t gpus) {
  std::vector<Choice> out;
  const double lo = std::max<double>(app.init_batch, app.min_local * gpus);
  const double hi = app.max_batch;
  if (lo > hi) return out;
  constexpr double kEps = 1e-8;
  std::set<std::pair<std::int32_t, std::int32_t>> seen;
  for (int i = 0; i < 50; ++i) {
    const double batch = lo * std::pow(hi / lo, i / 49.0);
    const double local = batch / gpus;
    auto accum = static_cast<std::int32_t>(std::ceil(local / app.max_local - kEps)) - 1;
    if (gpus == 1 && local > app.init_batch + kEps) accum = std::max(accum, 1);
    auto atomic = static_cast<std::int32_t>(std::ceil(local / (accum + 1) - kEps));
    if (atomic < app.min_local || atomic > app.max_local) continue;
    atomic = std::min(atomic, app.max_batch / (gpus * (accum + 1)));
    if (atomic < 1 || !seen.insert({atomic, accum}).second) continue;
    out.push_back(make_choice(app, {.atomic_bsz = atomic, .accum_steps = accum}, gpus));
  }
  return out;
}

// An elastic job: at each placement, each epoch runs at the batch split that needs the
// least time there (an oracle GoodputFunction.optimize, on the true profiles), among the
// artifact's choices and the job's own batch split as the rigid job splits it, so it is
// never slower than the rigid job.
class ElasticPolluxProfile final : public RuntimeProfile {
 public:
  ElasticPolluxProfile(AppByType apps, std::int32_t batch)
      : apps_(std::move(apps)), batch_(batch) {}
  double seconds(const core::GpuTypeId& gpu_type,
                 std::span<const std::int32_t> gpus_per_node) const override {
    const App& app = *for_type(apps_, gpu_type);
    std::int32_t gpus = 0;
    for (std::int32_t g : gpus_per_node) gpus += g;
    std::vector<const Choice*> choices;
    std::vector<double> step;
    const auto consider = [&](const Choice& c) {
      const PolluxJobModel m{.atomic_bsz = c.atomic_bsz, .accum_steps = c.accum_steps};
      choices.push_back(&c);
      step.push_back(step_seconds(app, m, gpus_per_node));
    };
    PolluxJobModel own;
    local_batch(app, gpus, batch_, own);
    const Choice own_choice = own.atomic_bsz >= 1 ? make_choice(app, own, gpus) : Choice{};
    if (own.atomic_bsz >= 1) consider(own_choice);
    if (gpus < static_cast<std::int32_t>(app.choices.size())) {
      for (const Choice& c : app.choices[gpus]) consider(c);
    }
    double total = 0;
    for (std::int32_t e = 0; e < app.max_epochs; ++e) {
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < choices.size(); ++i) {
        best = std::min(best, step[i] * choices[i]->steps_by_epoch[e]);
      }
      total += best;
    }
    return total;
  }
  std::vector<core::GpuTypeId> gpu_types() const override { return types_of(apps_); }

 private:
  AppByType apps_;
  std::int32_t batch_;
};

core::Result<Apps> load_apps(const fs::path& dir, const std::string& suffix) {
  Apps apps;
  for (const AppConstants& c : kApps) {
    CORRAL_ASSIGN_OR_RETURN(App app, load_app(dir / c.name, c, suffix));
    app.choices.resize(kMaxElasticGpus + 1);
    for (std::int32_t n = 1; n <= kMaxElasticGpus; ++n) app.choices[n] = batch_choices(app, n);
    apps[c.name] = std::make_shared<const App>(std::move(app));
  }
  return apps;
}

core::Result<PolluxJobModel> model_for(const App& app, std::int32_t gpus, std::int32_t batch) {
  PolluxJobModel m;
  local_batch(app, gpus, batch, m);
  if (m.atomic_bsz < 1) {
    return core::invalid_argument(
        "batch_size",
        fmt::format("{}: batch {} on {} GPUs leaves no per-GPU batch", app.name, batch, gpus));
  }
  m.work_steps = work_steps(app, gpus * m.atomic_bsz * (m.accum_steps + 1));
  return m;
}

std::int32_t most_replicas(const App& app) {
  return static_cast<std::int32_t>(app.max_batch / app.min_local);
}

std::shared_ptr<const RuntimeProfile> rigid_profile(std::map<core::GpuTypeId, TypedModel> models) {
  return std::make_shared<PolluxProfile>(std::move(models));
}

std::shared_ptr<const RuntimeProfile> elastic_profile(AppByType apps, std::int32_t batch) {
  return std::make_shared<ElasticPolluxProfile>(std::move(apps), batch);
}

}  // namespace corral::sim::pollux
