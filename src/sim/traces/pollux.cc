#include "sim/traces/pollux.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace corral::sim {
namespace {

namespace fs = std::filesystem;

// The artifact's applications.py: epochs each application trains for, and the one
// per-GPU batch limit it sets by hand (the rest come from the profiles).
struct AppConstants {
  const char* name;
  std::int32_t max_epochs;
  std::int32_t max_local_bsz;  // 0: the largest profiled
};
constexpr AppConstants kApps[] = {{"bert", 2, 0},      {"cifar10", 100, 0},    {"ncf", 10, 0},
                                  {"imagenet", 90, 0}, {"deepspeech2", 80, 0}, {"yolov3", 50, 8}};
constexpr std::int32_t kGpusPerNode = 4;  // the Pollux testbed
constexpr std::int32_t kMaxProfiledNodes = 16;
// The artifact's cap on an elastic (Pollux) job's replicas: "simulator can't handle more".
constexpr std::int32_t kMaxElasticGpus = 64;

using Row = std::vector<double>;

core::Result<std::vector<Row>> read_csv(const fs::path& path, std::size_t columns) {
  std::ifstream in(path);
  if (!in) return core::invalid_argument("workload", fmt::format("cannot open {}", path.string()));
  std::vector<Row> rows;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 || line.empty()) continue;  // header
    Row row;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
      double v = 0;
      const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      if (ec != std::errc() || !std::isfinite(v)) {
        return core::invalid_argument(
            "workload", fmt::format("{}:{}: column {}: not a number: '{}'", path.string(), line_no,
                                    row.size() + 1, cell));
      }
      row.push_back(v);
    }
    if (row.size() != columns) {
      return core::invalid_argument(
          "workload", fmt::format("{}:{}: expected {} columns, got {}", path.string(), line_no,
                                  columns, row.size()));
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

core::Result<App> load_app(const fs::path& dir, const AppConstants& c) {
  App app;
  app.name = c.name;
  app.max_epochs = c.max_epochs;
  CORRAL_ASSIGN_OR_RETURN(std::vector<Row> placements, read_csv(dir / "placements.csv", 4));
  CORRAL_ASSIGN_OR_RETURN(std::vector<Row> scalability, read_csv(dir / "scalability.csv", 5));
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
    CORRAL_ASSIGN_OR_RETURN(std::vector<Row> rows, read_csv(entry.path(), 5));
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

class PolluxProfile final : public RuntimeProfile {
 public:
  PolluxProfile(std::shared_ptr<const App> app, PolluxJobModel m) : app_(std::move(app)), m_(m) {}
  double seconds(std::span<const std::int32_t> gpus_per_node) const override {
    return m_.work_steps * step_seconds(*app_, m_, gpus_per_node);
  }

 private:
  std::shared_ptr<const App> app_;
  PolluxJobModel m_;
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
  ElasticPolluxProfile(std::shared_ptr<const App> app, std::int32_t batch)
      : app_(std::move(app)), batch_(batch) {}
  double seconds(std::span<const std::int32_t> gpus_per_node) const override {
    std::int32_t gpus = 0;
    for (std::int32_t g : gpus_per_node) gpus += g;
    std::vector<const Choice*> choices;
    std::vector<double> step;
    const auto consider = [&](const Choice& c) {
      const PolluxJobModel m{.atomic_bsz = c.atomic_bsz, .accum_steps = c.accum_steps};
      choices.push_back(&c);
      step.push_back(step_seconds(*app_, m, gpus_per_node));
    };
    PolluxJobModel own;
    local_batch(*app_, gpus, batch_, own);
    const Choice own_choice = own.atomic_bsz >= 1 ? make_choice(*app_, own, gpus) : Choice{};
    if (own.atomic_bsz >= 1) consider(own_choice);
    if (gpus < static_cast<std::int32_t>(app_->choices.size())) {
      for (const Choice& c : app_->choices[gpus]) consider(c);
    }
    double total = 0;
    for (std::int32_t e = 0; e < app_->max_epochs; ++e) {
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < choices.size(); ++i) {
        best = std::min(best, step[i] * choices[i]->steps_by_epoch[e]);
      }
      total += best;
    }
    return total;
  }

 private:
  std::shared_ptr<const App> app_;
  std::int32_t batch_;
};

std::vector<std::int32_t> tightest(std::int32_t gpus) {
  std::vector<std::int32_t> p;
  for (std::int32_t left = gpus; left > 0; left -= kGpusPerNode) {
    p.push_back(std::min(left, kGpusPerNode));
  }
  return p;
}

core::Result<std::map<std::string, std::shared_ptr<const App>>> load_apps(const fs::path& dir) {
  std::map<std::string, std::shared_ptr<const App>> apps;
  for (const AppConstants& c : kApps) {
    CORRAL_ASSIGN_OR_RETURN(App app, load_app(dir / c.name, c));
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

}  // namespace

core::Result<PolluxJobModel> pollux_job_model(const std::string& profiles_dir,
                                              const std::string& application, std::int32_t gpus,
                                              std::int32_t batch_size,
                                              std::span<const std::int32_t> gpus_per_node) {
  CORRAL_ASSIGN_OR_RETURN(auto apps, load_apps(profiles_dir));
  const auto it = apps.find(application);
  if (it == apps.end()) {
    return core::invalid_argument("application", fmt::format("unknown '{}'", application));
  }
  CORRAL_ASSIGN_OR_RETURN(PolluxJobModel m, model_for(*it->second, gpus, batch_size));
  m.step_seconds = step_seconds(*it->second, m, gpus_per_node);
  return m;
}

core::Result<Workload> load_pollux_workload(const std::string& path,
                                            const std::string& profiles_dir) {
  const fs::path dir = profiles_dir.empty() ? fs::path(path).parent_path().parent_path() / "traces"
                                            : fs::path(profiles_dir);
  CORRAL_ASSIGN_OR_RETURN(auto apps, load_apps(dir));
  std::ifstream in(path);
  if (!in) return core::invalid_argument("workload", fmt::format("cannot open {}", path));
  Workload w{.source = path};
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (line_no == 1) {
      if (line != "name,time,application,num_replicas,batch_size") {
        return core::invalid_argument("workload",
                                      fmt::format("{}:1: header must be "
                                                  "name,time,application,num_replicas,batch_size",
                                                  path));
      }
      continue;
    }
    const auto bad = [&](int column, const std::string& why) {
      return core::invalid_argument(
          "workload", fmt::format("{}:{}: column {}: {}", path, line_no, column, why));
    };
    if (cells.size() != 5) return bad(0, fmt::format("expected 5 columns, got {}", cells.size()));
    const auto app = apps.find(cells[2]);
    if (app == apps.end()) return bad(3, fmt::format("unknown application '{}'", cells[2]));
    std::int64_t time_s = 0;
    std::int32_t gpus = 0, batch = 0;
    const auto num = [](const std::string& s, auto& v) {
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && ptr == s.data() + s.size();
    };
    if (!num(cells[1], time_s) || time_s < 0) return bad(2, "time must be an integer >= 0");
    if (!num(cells[3], gpus) || gpus < 1 || gpus > 1024) return bad(4, "num_replicas: 1..1024");
    if (!num(cells[4], batch) || batch < 1) return bad(5, "batch_size must be >= 1");
    CORRAL_ASSIGN_OR_RETURN(PolluxJobModel m, model_for(*app->second, gpus, batch));
    auto profile = std::make_shared<PolluxProfile>(app->second, m);
    const double ideal = profile->seconds(tightest(gpus));
    // The artifact's elastic (Pollux) limits, simulator.py get_pollux_job_info(): at
    // most min(64, max batch / smallest per-GPU batch) replicas; ncf stays at 1 GPU and
    // a fixed batch. Its min_replicas 0 (suspended) is a stop here, so the least is 1.
    std::shared_ptr<const RuntimeProfile> elastic;
    std::int32_t most = 0;
    if (app->second->name != "ncf") {
      elastic = std::make_shared<ElasticPolluxProfile>(app->second, batch);
      most = std::max(gpus,
                      std::min(kMaxElasticGpus, static_cast<std::int32_t>(app->second->max_batch /
                                                                          app->second->min_local)));
    }
    w.jobs.push_back({.name = cells[0],
                      .tenant = core::TenantId("default"),
                      .submit_ms = time_s * 1000,
                      .gpus = gpus,
                      .duration_ms = std::max<std::int64_t>(1, std::llround(ideal * 1000)),
                      .gpu_type = "",
                      .status = "",
                      .profile = std::move(profile),
                      .elastic_profile = std::move(elastic),
                      .elastic_min_gpus = most > 0 ? 1 : 0,
                      .elastic_max_gpus = most});
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_ms < b.submit_ms; });
  return w;
}

std::vector<core::ScalingPoint> scaling_curve(const RuntimeProfile& profile, std::int32_t min_gpus,
                                              std::int32_t max_gpus, std::int32_t node_gpus) {
  std::vector<core::ScalingPoint> curve;
  const auto add = [&](std::int32_t n) {
    std::vector<std::int32_t> per_node(static_cast<std::size_t>(n / node_gpus), node_gpus);
    if (n % node_gpus != 0) per_node.push_back(n % node_gpus);
    curve.push_back({.gpus = n, .throughput = 1.0 / profile.seconds(per_node)});
  };
  for (std::int32_t n = std::max(min_gpus, 1); n < max_gpus; n *= 2) add(n);
  add(max_gpus);
  return curve;
}

}  // namespace corral::sim
