#include "sim/report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace corral::sim {
namespace {

using nlohmann::json;

// Colour-blind-safe palette (Okabe-Ito), one colour per policy in run order.
constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                   "#E69F00", "#56B4E9", "#F0E442", "#000000"};
constexpr std::size_t kMaxPoints = 600;  // per line, so the page stays small

const char* color(std::size_t i) { return kColors[i % std::size(kColors)]; }

std::string escape_html(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string csv_quote(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

json distribution_json(const Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"median", d.median}, {"p99", d.p99}};
}

json metrics_json(const Metrics& m, const RunResult& r) {
  json j = {{"jobs", m.jobs},
            {"finished", m.finished},
            {"never_started", m.never_started},
            {"gpu_allocation", m.gpu_allocation},
            {"idle_waiting_share", m.idle_waiting_share},
            {"mean_jct_s", m.jct_s.mean},
            {"median_jct_s", m.jct_s.median},
            {"p99_jct_s", m.jct_s.p99},
            {"mean_queue_s", m.queue_s.mean},
            {"median_queue_s", m.queue_s.median},
            {"p99_queue_s", m.queue_s.p99},
            {"makespan_s", m.makespan_s},
            {"jain_index", m.jain_index},
            {"preemptions", m.preemptions},
            {"resizes", m.resizes},
            {"resize_restart_gpu_hours", m.resize_restart_gpu_hours},
            {"failure_stops", m.failure_stops},
            {"gpu_failures", m.gpu_failures},
            {"lost_gpu_hours", m.lost_gpu_hours},
            {"mean_slowdown_multi_gpu", m.mean_slowdown},
            {"total_cost_usd", m.total_cost_usd},
            {"allocated_gpu_hours", static_cast<double>(r.allocated_gpu_ms) / 3600e3},
            {"cycles", m.cycles},
            {"cycles_skipped", m.cycles_skipped},
            {"checks", m.checks},
            {"wall_seconds", m.wall_seconds},
            {"decide_seconds", m.decide_seconds}};
  json buckets = json::array();
  for (const SizeBucket& b : m.by_size) {
    buckets.push_back({{"gpus", b.label},
                       {"jct_s", distribution_json(b.jct_s)},
                       {"queue_s", distribution_json(b.queue_s)}});
  }
  j["by_size"] = buckets;
  json ledger = {{"gpu_hours", json::object()},
                 {"cost_usd", json::object()},
                 {"residual_gpu_ms", m.ledger.residual_ms},
                 {"entries", m.ledger.entries},
                 {"periods", m.ledger.periods}};
  for (int b = 0; b < ledger::kBucketCount; ++b) {
    const std::string name(ledger::to_string(static_cast<ledger::Bucket>(b)));
    ledger["gpu_hours"][name] = static_cast<double>(m.ledger.gpu_ms[b]) / 3600e3;
    ledger["cost_usd"][name] = static_cast<double>(m.ledger.amount[b]) / 1e6;
  }
  if (!m.ledger_error.empty()) ledger["error"] = m.ledger_error;
  j["ledger"] = std::move(ledger);
  json tenants = json::array();
  for (const TenantMetrics& t : m.tenants) {
    tenants.push_back({{"tenant", t.id.value},
                       {"weight", t.weight},
                       {"jobs", t.jobs},
                       {"gpu_hours", t.gpu_hours},
                       {"share", t.share},
                       {"entitlement", t.entitlement},
                       {"cost_usd", t.cost_usd},
                       {"mean_jct_s", t.mean_jct_s},
                       {"mean_queue_s", t.mean_queue_s},
                       {"backlog_service", t.backlog_service}});
    if (t.sharing_incentive >= 0) tenants.back()["sharing_incentive"] = t.sharing_incentive;
  }
  j["tenants"] = tenants;
  if (m.sweeps.sweeps > 0) {
    const SweepMetrics& s = m.sweeps;
    j["sweeps"] = {{"sweeps", s.sweeps},
                   {"trials", s.trials},
                   {"stopped_early", s.stopped_early},
                   {"trial_gpu_hours", s.trial_gpu_hours},
                   {"finished", s.finished},
                   {"best_found", s.best_found},
                   {"mean_regret", s.mean_regret},
                   {"mean_sweep_hours", s.mean_sweep_hours},
                   {"others_mean_jct_hours", s.others_mean_jct_hours}};
  }
  return j;
}

// Seconds as a person reads them: "45 s", "12.5 min", "3.2 h", "4.1 d".
std::string human_seconds(double s) {
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.1f} min", s / 60);
  if (s < 48 * 3600) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}

// Per tenant and policy: jobs, mean JCT and queueing delay, and the sharing incentive
// where it was computed (its JCT alone on its share over its JCT here).
std::string tenant_table(const std::vector<PolicyRun>& runs) {
  std::string out =
      "<table id=\"tenants\"><tr><th>policy</th><th>tenant</th><th>jobs</th><th>share of "
      "GPU-hours</th><th>mean JCT</th><th>mean queue</th><th>sharing incentive</th></tr>\n";
  for (const PolicyRun& pr : runs) {
    for (const TenantMetrics& t : pr.metrics.tenants) {
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td><td>{}</td><td>{}</td>"
          "</tr>\n",
          escape_html(pr.metrics.policy), escape_html(t.id.value), t.jobs, 100 * t.share,
          human_seconds(t.mean_jct_s), human_seconds(t.mean_queue_s),
          t.sharing_incentive >= 0 ? fmt::format("{:.2f}", t.sharing_incentive) : "");
    }
  }
  return out + "</table>\n";
}

// --- SVG charts -------------------------------------------------------------------------

struct Series {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;
};

struct Axes {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool log_x = false;
  std::string x_label, y_label;
};

constexpr double kW = 720, kH = 300, kLeft = 64, kRight = 16, kTop = 16, kBottom = 44;

double sx(const Axes& a, double x) {
  const double lo = a.log_x ? std::log10(a.x0) : a.x0;
  const double hi = a.log_x ? std::log10(a.x1) : a.x1;
  const double v = a.log_x ? std::log10(std::max(x, a.x0)) : x;
  return kLeft + (hi > lo ? (v - lo) / (hi - lo) : 0) * (kW - kLeft - kRight);
}
double sy(const Axes& a, double y) {
  return kH - kBottom - (a.y1 > a.y0 ? (y - a.y0) / (a.y1 - a.y0) : 0) * (kH - kTop - kBottom);
}

std::string tick_text(double v) {
  if (std::abs(v) >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (std::abs(v) >= 1e3) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.3g}", v);
}

std::string axes_svg(const Axes& a, bool x_ticks = true) {
  std::string s;
  s += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#444"/>)", kLeft, kH - kBottom,
                   kW - kRight, kH - kBottom);
  s += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#444"/>)", kLeft, kTop, kLeft,
                   kH - kBottom);
  for (int i = 0; i <= 4; ++i) {
    const double y = a.y0 + (a.y1 - a.y0) * i / 4;
    s += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end" font-size="11">{}</text>)"
                     R"(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#ddd"/>)",
                     kLeft - 4, sy(a, y) + 4, tick_text(y), kLeft, sy(a, y), kW - kRight, sy(a, y));
  }
  if (!x_ticks) {
    // The caller labels the x axis itself (tenant names).
  } else if (a.log_x) {
    for (double x = std::pow(10, std::floor(std::log10(a.x0))); x <= a.x1 * 1.0001; x *= 10) {
      if (x < a.x0) continue;
      s += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="11">{}</text>)",
                       sx(a, x), kH - kBottom + 14, tick_text(x));
    }
  } else {
    for (int i = 0; i <= 5; ++i) {
      const double x = a.x0 + (a.x1 - a.x0) * i / 5;
      s += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="11">{}</text>)",
                       sx(a, x), kH - kBottom + 14, tick_text(x));
    }
  }
  s += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>)",
                   (kLeft + kW - kRight) / 2, kH - 8, escape_html(a.x_label));
  s += fmt::format(
      R"svg(<text x="14" y="{}" text-anchor="middle" font-size="12" transform="rotate(-90 14 {})">{}</text>)svg",
      (kTop + kH - kBottom) / 2, (kTop + kH - kBottom) / 2, escape_html(a.y_label));
  return s;
}

std::string legend_svg(const std::vector<Series>& series) {
  std::string s;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double x = kLeft + 10 + static_cast<double>(i) * 130;
    s += fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)"
                     R"(<text x="{}" y="{}" font-size="12">{}</text>)",
                     x, kTop, series[i].color, x + 16, kTop + 10, escape_html(series[i].name));
  }
  return s;
}

std::string line_chart(const std::string& id, const std::string& title, const Axes& a,
                       const std::vector<Series>& series) {
  std::string s = fmt::format(
      R"(<figure class="plot" id="{}"><figcaption>{}</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}">)",
      id, escape_html(title), kW, kH, kW, kH);
  s += axes_svg(a);
  for (const Series& line : series) {
    std::string pts;
    for (const auto& [x, y] : line.points) pts += fmt::format("{:.1f},{:.1f} ", sx(a, x), sy(a, y));
    s += fmt::format(
        R"(<polyline data-series="{}" fill="none" stroke="{}" stroke-width="1.5" points="{}"><title>{}</title></polyline>)",
        escape_html(line.name), line.color, pts, escape_html(line.name));
  }
  s += legend_svg(series);
  return s + "</svg></figure>";
}

// Averages samples into at most kMaxPoints time buckets, so long runs stay drawable.
template <typename Value>
std::vector<std::pair<double, double>> downsample(const RunResult& r, Value value) {
  std::vector<std::pair<double, double>> out;
  if (r.timeline.empty()) return out;
  const double t0 = static_cast<double>(r.start_ms);
  const double span = std::max(1.0, static_cast<double>(r.end_ms) - t0);
  std::vector<double> sum(kMaxPoints, 0), n(kMaxPoints, 0);
  for (const Sample& s : r.timeline) {
    const auto b = std::min<std::size_t>(
        kMaxPoints - 1, static_cast<std::size_t>((static_cast<double>(s.t_ms) - t0) / span *
                                                 static_cast<double>(kMaxPoints)));
    sum[b] += value(s);
    n[b] += 1;
  }
  for (std::size_t b = 0; b < kMaxPoints; ++b) {
    if (n[b] > 0) {
      out.emplace_back((static_cast<double>(b) + 0.5) / kMaxPoints * span / 3600e3, sum[b] / n[b]);
    }
  }
  return out;
}

std::string tenant_chart(const std::vector<PolicyRun>& runs) {
  std::vector<core::TenantId> tenants;
  std::map<core::TenantId, double> entitled;
  for (const PolicyRun& pr : runs) {
    for (const TenantMetrics& t : pr.metrics.tenants) {
      if (!entitled.count(t.id)) tenants.push_back(t.id);
      entitled[t.id] = t.entitlement;
    }
  }
  std::sort(tenants.begin(), tenants.end());
  double top = 0.05;
  for (const PolicyRun& pr : runs) {
    for (const TenantMetrics& t : pr.metrics.tenants) top = std::max({top, t.share, t.entitlement});
  }
  Axes a{.x0 = 0,
         .x1 = static_cast<double>(std::max<std::size_t>(1, tenants.size())),
         .y0 = 0,
         .y1 = std::min(1.0, top * 1.1),
         .x_label = "tenant",
         .y_label = "share of GPU-hours"};
  std::string s = fmt::format(
      R"(<figure class="plot" id="plot-tenant-share"><figcaption>Per-tenant share of GPU-hours (bars) against weighted entitlement (black ticks)</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}">)",
      kW, kH, kW, kH);
  s += axes_svg(a, /*x_ticks=*/false);
  const double group = (kW - kLeft - kRight) / a.x1;
  const double bar = group * 0.8 / static_cast<double>(std::max<std::size_t>(1, runs.size()));
  for (std::size_t ti = 0; ti < tenants.size(); ++ti) {
    const double gx = kLeft + group * static_cast<double>(ti) + group * 0.1;
    for (std::size_t pi = 0; pi < runs.size(); ++pi) {
      double share = 0;
      for (const TenantMetrics& t : runs[pi].metrics.tenants) {
        if (t.id == tenants[ti]) share = t.share;
      }
      const double x = gx + bar * static_cast<double>(pi);
      s += fmt::format(
          R"(<rect data-series="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{} {}: {:.3f}</title></rect>)",
          escape_html(runs[pi].run.policy), x, sy(a, share), std::max(bar - 1, 1.0),
          sy(a, 0) - sy(a, share), color(pi), escape_html(runs[pi].run.policy),
          escape_html(tenants[ti].value), share);
    }
    const double e = entitled[tenants[ti]];
    s += fmt::format(
        R"(<line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}" stroke="#000" stroke-width="2"><title>entitlement {:.3f}</title></line>)",
        gx, gx + group * 0.8, sy(a, e), sy(a, e), e);
    s += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="10">{}</text>)",
                     gx + group * 0.4, kH - kBottom + 14, escape_html(tenants[ti].value));
  }
  std::vector<Series> legend;
  for (std::size_t pi = 0; pi < runs.size(); ++pi)
    legend.push_back({runs[pi].run.policy, color(pi), {}});
  s += legend_svg(legend);
  return s + "</svg></figure>";
}

// Mean JCT against Jain's index, one point per run: the fairness frontier. The runs of a
// fairness sweep (`corral-sim --sweep-fairness`, named "corral fairness=F") are joined by
// a line in sweep order, so the frontier's shape shows.
std::string frontier_chart(const std::vector<PolicyRun>& runs) {
  double top = 1;
  for (const PolicyRun& pr : runs) top = std::max(top, pr.metrics.jct_s.mean / 3600.0);
  const Axes a{.x0 = 0,
               .x1 = 1,
               .y0 = 0,
               .y1 = top * 1.1,
               .x_label = "Jain's index between tenants",
               .y_label = "mean JCT (h)"};
  std::string s = fmt::format(
      R"(<figure class="plot" id="plot-frontier"><figcaption>Fairness frontier: mean JCT against Jain's index, one point per policy (a fairness sweep joined by a line)</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}">)",
      kW, kH, kW, kH);
  s += axes_svg(a);
  std::string sweep;
  std::vector<Series> legend;
  for (std::size_t pi = 0; pi < runs.size(); ++pi) {
    const Metrics& m = runs[pi].metrics;
    const double x = sx(a, m.jain_index), y = sy(a, m.jct_s.mean / 3600.0);
    s += fmt::format(
        R"(<circle data-series="{}" cx="{:.1f}" cy="{:.1f}" r="5" fill="{}"><title>{}: Jain {:.3f}, mean JCT {}</title></circle>)",
        escape_html(m.policy), x, y, color(pi), escape_html(m.policy), m.jain_index,
        human_seconds(m.jct_s.mean));
    if (m.policy.find("fairness=") != std::string::npos)
      sweep += fmt::format("{:.1f},{:.1f} ", x, y);
    legend.push_back({m.policy, color(pi), {}});
  }
  if (!sweep.empty()) {
    s += fmt::format(R"(<polyline fill="none" stroke="#888" stroke-dasharray="4 3" points="{}"/>)",
                     sweep);
  }
  s += legend_svg(legend);
  return s + "</svg></figure>";
}

}  // namespace

std::vector<std::string> report_plot_ids() {
  return {"plot-utilization", "plot-queue", "plot-jct-cdf", "plot-tenant-share", "plot-frontier"};
}

std::string summary_json(const Fleet& fleet, const Workload& workload,
                         const std::vector<PolicyRun>& runs) {
  json out = {
      {"fleet",
       {{"name", fleet.name}, {"total_gpus", fleet.total_gpus()}, {"nodes", fleet.nodes.size()}}},
      {"workload", {{"source", workload.source}, {"jobs", workload.jobs.size()}}}};
  json policies = json::object();
  for (const PolicyRun& pr : runs) policies[pr.run.policy] = metrics_json(pr.metrics, pr.run);
  out["policies"] = policies;
  return out.dump(2) + "\n";
}

std::string jobs_csv(const std::vector<PolicyRun>& runs) {
  std::string out =
      "policy,job_id,tenant,gpus,submit_s,start_s,finish_s,queue_s,jct_s,duration_s,run_s,"
      "gpu_type,wanted,packed,slowdown,attempts,preemptions,failures,lost_gpu_hours,last_reason\n";
  const auto secs = [](std::int64_t ms) {
    return ms < 0 ? std::string() : fmt::format("{:.3f}", static_cast<double>(ms) / 1000.0);
  };
  for (const PolicyRun& pr : runs) {
    for (const JobResult& j : pr.run.jobs) {
      const bool started = j.start_ms >= 0;
      const bool done = j.finish_ms >= 0;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.4f},{},{},{},{:.6f},{}\n",
                         pr.run.policy, csv_quote(j.name), csv_quote(j.tenant.value), j.gpus,
                         secs(j.submit_ms), secs(j.start_ms), secs(j.finish_ms),
                         started ? secs(j.start_ms - j.submit_ms) : "",
                         done ? secs(j.finish_ms - j.submit_ms) : "", secs(j.duration_ms),
                         secs(j.run_ms), j.gpu_type, core::to_string(j.wanted),
                         started ? std::string(core::to_string(j.packed)) : "", j.slowdown,
                         j.attempts, j.preemptions, j.failures,
                         static_cast<double>(j.lost_gpu_ms) / 3600e3, csv_quote(j.last_reason));
    }
  }
  return out;
}

std::string report_html(const Fleet& fleet, const Workload& workload,
                        const std::vector<PolicyRun>& runs) {
  std::string body;
  // 1. Utilization and queue length over time.
  std::vector<Series> util, queue;
  double hours = 0.001, max_queue = 1;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i].run;
    hours = std::max(hours, static_cast<double>(r.end_ms - r.start_ms) / 3600e3);
    const double total = static_cast<double>(std::max<std::int64_t>(1, r.total_gpus));
    util.push_back({r.policy, color(i),
                    downsample(r, [&](const Sample& s) { return s.allocated_gpus / total; })});
    queue.push_back({r.policy, color(i), downsample(r, [](const Sample& s) {
                       return static_cast<double>(s.pending_jobs);
                     })});
    for (const auto& [x, y] : queue.back().points) max_queue = std::max(max_queue, y);
  }
  body += line_chart("plot-utilization", "GPU allocation over time (allocated / fleet GPUs)",
                     {.x1 = hours, .y1 = 1.0, .x_label = "hours", .y_label = "allocation"}, util) +
          "\n";
  body += line_chart(
              "plot-queue", "Queue length over time (pending jobs)",
              {.x1 = hours, .y1 = max_queue * 1.05, .x_label = "hours", .y_label = "pending jobs"},
              queue) +
          "\n";
  // 2. JCT CDF, log x.
  std::vector<Series> cdf;
  double lo = 1e18, hi = 1;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::vector<double> jct;
    for (const JobResult& j : runs[i].run.jobs) {
      if (j.finish_ms >= 0)
        jct.push_back(std::max(1.0, static_cast<double>(j.finish_ms - j.submit_ms) / 1000.0));
    }
    std::sort(jct.begin(), jct.end());
    Series s{runs[i].run.policy, color(i), {}};
    const std::size_t step = std::max<std::size_t>(1, jct.size() / kMaxPoints);
    for (std::size_t k = 0; k < jct.size(); k += step) {
      s.points.emplace_back(jct[k], static_cast<double>(k + 1) / static_cast<double>(jct.size()));
    }
    if (!jct.empty()) {
      s.points.emplace_back(jct.back(), 1.0);
      lo = std::min(lo, jct.front());
      hi = std::max(hi, jct.back());
    }
    cdf.push_back(std::move(s));
  }
  if (lo > hi) lo = 1;
  body += line_chart("plot-jct-cdf", "Job completion time CDF (log scale)",
                     {.x0 = std::max(1.0, lo),
                      .x1 = std::max(hi, lo * 10),
                      .y1 = 1.0,
                      .log_x = true,
                      .x_label = "JCT (s)",
                      .y_label = "fraction of jobs"},
                     cdf) +
          "\n";
  // 3. Tenants.
  body += tenant_chart(runs) + "\n";
  body += frontier_chart(runs) + "\n";

  // 4. The summary table.
  std::string table =
      "<table><tr><th>policy</th><th>allocation</th><th>mean JCT (s)</th><th>median JCT "
      "(s)</th><th>p99 JCT (s)</th><th>mean queue (s)</th><th>median queue (s)</th><th>makespan "
      "(s)</th><th>Jain</th><th>idle while waiting</th><th>preemptions</th><th>lost "
      "GPU-h</th><th>cost (USD)</th></tr>\n";
  for (const PolicyRun& pr : runs) {
    const Metrics& m = pr.metrics;
    table += fmt::format(
        "<tr><td>{}</td><td>{:.3f}</td><td>{:.0f}</td><td>{:.0f}</td><td>{:.0f}</td><td>{:.0f}</"
        "td><td>{:.0f}</td><td>{:.0f}</td><td>{:.3f}</td><td>{:.2f}%</td><td>{}</td><td>{:.1f}</"
        "td><td>{:.0f}</td></tr>\n",
        escape_html(m.policy), m.gpu_allocation, m.jct_s.mean, m.jct_s.median, m.jct_s.p99,
        m.queue_s.mean, m.queue_s.median, m.makespan_s, m.jain_index, 100 * m.idle_waiting_share,
        m.preemptions, m.lost_gpu_hours, m.total_cost_usd);
  }
  table += "</table>\n" + tenant_table(runs);

  std::string ids;
  for (const std::string& id : report_plot_ids()) ids += fmt::format("\"{}\",", id);
  ids.pop_back();
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>corral-sim: {fleet}</title>
<style>body{{font-family:sans-serif;max-width:780px;margin:1em auto}}figure{{margin:1em 0}}
figcaption{{font-weight:bold}}table{{border-collapse:collapse;font-size:12px}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}</style>
<script>window.onerror=function(m){{var s=document.getElementById("report-status");
if(s){{s.setAttribute("data-status","error");s.textContent="script error: "+m;}}}};</script>
</head><body>
<h1>corral-sim report</h1>
<p>Fleet <b>{fleet}</b> ({gpus} GPUs, {nodes} nodes); workload <b>{source}</b> ({jobs} jobs).</p>
<div id="report-status" data-status="pending">checking plots</div>
{table}{body}<script>
(function(){{
  var expected=[{ids}];
  var errors=[];
  expected.forEach(function(id){{
    var el=document.getElementById(id);
    if(!el){{errors.push("missing plot "+id);return;}}
    var svg=el.querySelector("svg");
    if(!svg){{errors.push(id+": no svg");return;}}
    if(svg.querySelectorAll("[data-series]").length===0){{errors.push(id+": no data series");}}
  }});
  var s=document.getElementById("report-status");
  s.setAttribute("data-status",errors.length?"error":"ok");
  s.textContent=errors.length?errors.join("; "):"ok: "+expected.length+" plots";
}})();
</script>
</body></html>
)",
                     fmt::arg("fleet", escape_html(fleet.name)),
                     fmt::arg("gpus", fleet.total_gpus()), fmt::arg("nodes", fleet.nodes.size()),
                     fmt::arg("source", escape_html(workload.source)),
                     fmt::arg("jobs", workload.jobs.size()), fmt::arg("table", table),
                     fmt::arg("body", body), fmt::arg("ids", ids));
}

core::Status write_outputs(const std::string& dir, const Fleet& fleet, const Workload& workload,
                           const std::vector<PolicyRun>& runs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return core::internal_error(fmt::format("cannot create {}: {}", dir, ec.message()));
  const std::pair<const char*, std::string> files[] = {
      {"summary.json", summary_json(fleet, workload, runs)},
      {"jobs.csv", jobs_csv(runs)},
      {"report.html", report_html(fleet, workload, runs)}};
  for (const auto& [name, text] : files) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) return core::internal_error(fmt::format("cannot write {}", path));
  }
  return core::ok_status();
}

}  // namespace corral::sim
