// /v1/reservations: GPUs held for a tenant over a window. A reservation is checked as a
// whole before it is stored: its tenant and nodes exist, its window is open now or
// ahead, and the fleet can honour it beside every reservation whose window overlaps
// (unless the admin says "overcommit": true, e.g. for GPUs still to arrive); the
// scheduler would otherwise keep failing to give it what it promised.
#include <algorithm>
#include <httplib.h>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "core/units.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/base/stored_documents.h"
#include "server/http/list_page.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using core::StatusCode;
using nlohmann::json;

const char* state_at(const core::Reservation& r, core::Time now) {
  return now < r.start ? "upcoming" : now < r.end ? "active" : "ended";
}

json reservation_view(const store::ReservationRow& row, core::Time now) {
  json out = parse_or_null(row.spec_json);
  const auto r = reservation_from_json(row.spec_json);
  if (!r.ok()) return out;
  const std::string state = state_at(*r, now);
  out["state"] = state;
  // What it holds now: nothing outside its window, its nodes inside it. Which nodes an
  // open count reservation holds is the scheduler's choice each cycle (sched/gate.cc),
  // not stored, so that one has no heldNodes.
  if (state != "active") {
    out["heldNodes"] = json::array();
  } else if (!r->nodes.empty()) {
    out["heldNodes"] = out["nodes"];
  }
  return out;
}

Result<Reply> list_reservations(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.tenants().list_reservations());
  CORRAL_ASSIGN_OR_RETURN(
      auto out, name_page("reservations", std::move(rows), page,
                          [&](const store::ReservationRow& r) -> Result<std::optional<json>> {
                            if (!can_see_tenant(c.who, r.tenant.value))
                              return std::optional<json>();
                            return std::optional<json>(reservation_view(r, api.now()));
                          }));
  return json_reply(out);
}

// The GPUs of each type the fleet registers now, as registered (healthy or not), and the
// type and GPU count of each node.
struct FleetGpus {
  std::map<std::string, std::int64_t> by_type;
  std::map<std::string, std::pair<std::string, std::int64_t>> by_node;
};

Result<FleetGpus> fleet_gpus(store::NodeRepo& nodes) {
  FleetGpus f;
  CORRAL_ASSIGN_OR_RETURN(auto rows, nodes.list_nodes());
  for (const auto& [row, node] : stored_nodes(rows)) {
    if (node.gpus.empty()) continue;
    for (const auto& g : node.gpus) ++f.by_type[g.type.value];
    f.by_node[row->id.value] = {node.gpus.front().type.value,
                                static_cast<std::int64_t>(node.gpus.size())};
  }
  return f;
}

// Every reservation whose window overlaps `r`'s is counted against the fleet at each
// instant one of them starts inside r's window (the peaks of a sum of intervals).
Status check_reservation_fits(store::Tx& tx, const core::Reservation& r, bool overcommit,
                              core::Time now) {
  if (r.end <= now) {
    return core::invalid_argument("endMs", "the window ended " + core::format_utc(r.end) +
                                               "; a reservation must be open now or ahead");
  }
  CORRAL_ASSIGN_OR_RETURN(const FleetGpus fleet, fleet_gpus(tx.nodes()));
  std::string type;
  std::int64_t gpus = r.count;
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    const auto n = fleet.by_node.find(r.nodes[i].value);
    if (n == fleet.by_node.end()) {
      return core::invalid_argument("nodes[" + std::to_string(i) + "]",
                                    "unknown node \"" + r.nodes[i].value + "\"");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (r.nodes[j] == r.nodes[i]) {
        return core::invalid_argument("nodes[" + std::to_string(i) + "]",
                                      "names " + r.nodes[i].value + " twice");
      }
    }
  }
  if (r.gpu_type) {
    type = r.gpu_type->value;
    const std::int64_t have = fleet.by_type.contains(type) ? fleet.by_type.at(type) : 0;
    if (r.count > have && !overcommit) {
      return core::invalid_argument("count", "asks for " + std::to_string(r.count) + " " + type +
                                                 " but the fleet has " + std::to_string(have) +
                                                 " (\"overcommit\": true to allow it)");
    }
  }
  if (overcommit) return Status();
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.tenants().list_reservations());
  std::vector<core::Reservation> others;
  for (auto& [row, o] : stored_reservations(rows)) {
    if (o.id == r.id || o.end <= r.start || r.end <= o.start || o.end <= now) continue;
    // A node held twice in one instant is promised to two tenants.
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
      if (std::find(o.nodes.begin(), o.nodes.end(), r.nodes[i]) != o.nodes.end()) {
        return core::invalid_argument("nodes[" + std::to_string(i) + "]",
                                      r.nodes[i].value + " is held by reservation " + o.id.value +
                                          " in this window (\"overcommit\": true "
                                          "to allow it)");
      }
    }
    others.push_back(std::move(o));
  }
  if (!r.gpu_type) return Status();
  // GPUs of `type` that reservation `o` holds: its count, or its nodes' GPUs.
  const auto held = [&](const core::Reservation& o) -> std::int64_t {
    if (o.gpu_type) return o.gpu_type->value == type ? o.count : 0;
    std::int64_t n = 0;
    for (const auto& id : o.nodes) {
      const auto it = fleet.by_node.find(id.value);
      if (it != fleet.by_node.end() && it->second.first == type) n += it->second.second;
    }
    return n;
  };
  const std::int64_t have = fleet.by_type.contains(type) ? fleet.by_type.at(type) : 0;
  std::vector<core::Time> instants = {std::max(r.start, now)};
  for (const auto& o : others) {
    if (o.start > r.start) instants.push_back(o.start);
  }
  for (const core::Time t : instants) {
    std::int64_t total = gpus;
    std::string with;
    for (const auto& o : others) {
      if (o.start > t || t >= o.end || held(o) == 0) continue;
      total += held(o);
      with += (with.empty() ? "" : ", ") + o.id.value;
    }
    if (total > have) {
      return core::invalid_argument(
          "count", "with " + with + " it would promise " + std::to_string(total) + " " + type +
                       " at " + core::format_utc(t) + " but the fleet has " + std::to_string(have) +
                       " (\"overcommit\": true to allow it)");
    }
  }
  return Status();
}

Result<Reply> create_reservation(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(json body, core::parse_json_object(c.req.body));
  bool overcommit = false;
  if (body.contains("overcommit")) {
    if (!body["overcommit"].is_boolean())
      return core::invalid_argument("overcommit", "must be true or false");
    overcommit = body["overcommit"].get<bool>();
    body.erase("overcommit");
  }
  CORRAL_ASSIGN_OR_RETURN(const core::Reservation r, reservation_from_json(body.dump()));
  if (r.id.value.size() > 63 || !core::is_dns_label(r.id.value)) {
    return core::invalid_argument(
        "id", "must be a DNS label (lowercase letters, digits and '-', at most 63)");
  }
  CORRAL_ASSIGN_OR_RETURN(auto tenant, tx.tenants().get_tenant(r.tenant));
  if (!tenant) return core::invalid_argument("tenant", "unknown tenant \"" + r.tenant.value + "\"");
  CORRAL_ASSIGN_OR_RETURN(const auto existing, tx.tenants().list_reservations());
  for (const auto& e : existing) {
    if (e.id == r.id)
      return Status(StatusCode::kAlreadyExists, "reservation " + r.id.value + " exists");
  }
  CORRAL_RETURN_IF_ERROR(check_reservation_fits(tx, r, overcommit, api.now()));
  const std::string text = reservation_to_json(r);
  const Status inserted = tx.tenants().insert_reservation(
      {.id = r.id, .tenant = r.tenant, .spec_json = text, .created_at = api.now()});
  if (inserted.code() == StatusCode::kAlreadyExists) {
    return Status(StatusCode::kAlreadyExists, "reservation " + r.id.value + " exists");
  }
  CORRAL_RETURN_IF_ERROR(inserted);
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "reservation.create",
                                            "reservation/" + r.id.value, "",
                                            text + (overcommit ? " overcommit" : "")));
  Reply reply = json_reply(reservation_view({.spec_json = text}, api.now()), 201);
  reply.wake_scheduler = true;
  return reply;
}

Result<store::ReservationRow> find_reservation(const Call& c, store::Tx& tx) {
  const std::string id = c.req.matches[1];
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.tenants().list_reservations());
  for (auto& r : rows) {
    // A member sees its own tenant's only; another's answers as if it did not exist.
    if (r.id.value == id && can_see_tenant(c.who, r.tenant.value)) return std::move(r);
  }
  return core::not_found("reservation " + id.substr(0, 80) + " not found");
}

Result<Reply> get_reservation(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto row, find_reservation(c, tx));
  return json_reply(reservation_view(row, api.now()));
}

// Jobs placed inside it keep their GPUs; pending jobs that name it wait with that reason.
Result<Reply> delete_reservation(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto row, find_reservation(c, tx));
  CORRAL_RETURN_IF_ERROR(tx.tenants().delete_reservation(row.id));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "reservation.delete",
                                            "reservation/" + row.id.value, row.spec_json, ""));
  Reply reply = json_reply(reservation_view(row, api.now()));
  reply.wake_scheduler = true;
  return reply;
}

}  // namespace

std::vector<Route> reservation_routes(ApiContext& api) {
  return {
      read_route("GET", "/v1/reservations", kUsers, bind_api(api, list_reservations)),
      write_route("POST", "/v1/reservations", kAdmins, bind_api(api, create_reservation)),
      read_route("GET", R"(/v1/reservations/([^/]+))", kUsers, bind_api(api, get_reservation)),
      write_route("DELETE", R"(/v1/reservations/([^/]+))", kAdmins,
                  bind_api(api, delete_reservation)),
  };
}

}  // namespace corral::server
