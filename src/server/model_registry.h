// What the model registry's endpoints share (api_models.cc, api_drift.cc): a model
// version as a caller may see it, and a version's gates, read from a registration and
// evaluated for a promotion (docs/models.md#gates).
//
// Thread safety: free functions over the caller's transaction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "server/token_auth.h"
#include "store/store.h"

namespace corral::server {

// The version, when `who` may see its tenant; NotFound otherwise (another tenant's reads
// as missing).
core::Result<store::ModelVersionRow> visible_model_version(store::Tx& tx, const Principal& who,
                                                           const std::string& id,
                                                           const std::string& version);

// Every version of model `id` (by version), when `who` may see its tenant; NotFound
// otherwise, and for a model with no version.
core::Result<std::vector<store::ModelVersionRow>> visible_model(store::Tx& tx, const Principal& who,
                                                                const std::string& id);

// A registration's "gates", normalized ({metrics, improvement, schemaCompatible,
// approvals}, each present); InvalidArgument naming the field.
core::Result<nlohmann::json> read_model_gates(const nlohmann::json& body);

// One approval a version's promotion needs: by one of `approvers` (token owners), or by
// an admin where it names none; never by the version's registrant (docs/models.md#gates).
struct ApprovalGate {
  std::string name;
  std::vector<std::string> approvers;
};

// The approval gates of normalized `gates` (a plain name is a gate without approvers).
std::vector<ApprovalGate> approval_gates(const nlohmann::json& gates);

// Ok when `who` may record `gate` for `v` (`registrant`: the token that registered it,
// if it still exists); PermissionDenied saying who may otherwise.
core::Status may_approve(const Principal& who, const store::ModelVersionRow& v,
                         const std::optional<store::TokenRow>& registrant,
                         const ApprovalGate& gate);

// Every gate of `to` against `from` (the version the alias points at now, if any), each
// {gate, passed, detail}.
core::Result<nlohmann::json> evaluate_gates(store::Tx& tx, const store::ModelVersionRow& to,
                                            const std::optional<store::ModelVersionRow>& from);

}  // namespace corral::server
