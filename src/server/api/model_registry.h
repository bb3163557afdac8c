// The model registry's edge (docs/models.md): who may see a model, a registration's JSON
// read into registry types (and the stored documents, which are written in the same
// form), and the facts a gate is judged on, read from the store. The rules themselves are
// registry/model.h and registry/alias.h; api_models.cc and api_drift.cc parse, ask them
// and store.
//
// Thread safety: free functions over the caller's transaction.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "registry/alias.h"
#include "registry/model.h"
#include "server/http/token_auth.h"
#include "store/store.h"

namespace corral::server {

// The version, when `who` may see its tenant; NotFound otherwise (another tenant's reads
// as missing).
core::Result<store::ModelVersionRow> visible_model_version(store::ModelRepo& models,
                                                           const Principal& who,
                                                           const std::string& id,
                                                           const std::string& version);

// Every version of model `id` (by version), when `who` may see its tenant; NotFound
// otherwise, and for a model with no version.
core::Result<std::vector<store::ModelVersionRow>> visible_model(store::ModelRepo& models,
                                                                const Principal& who,
                                                                const std::string& id);

// A registration's "gates" ({metrics, improvement, schemaCompatible, approvals}, each
// optional); InvalidArgument naming the field.
core::Result<registry::ModelGates> read_model_gates(const nlohmann::json& body);

// body[key] as {field: type}: at most 256 fields; InvalidArgument naming the field.
core::Result<registry::Schema> read_schema(const nlohmann::json& body, const char* key);

// A version's content as stored and shown: {run, artifactUri, digest, inputSchema,
// outputSchema, gates}, gates in full.
nlohmann::json content_json(const registry::ModelContent& content);

// A stored version read back; Internal naming the version when its row cannot be read.
core::Result<registry::ModelVersion> model_version(const store::ModelVersionRow& row);

// An alias as stored: its state column holds {canary, endpoint, gated}.
registry::AliasState alias_state(const store::ModelAliasRow& row);
std::string alias_state_text(const registry::AliasState& state);

// `v` with the last value of every metric its run reported.
core::Result<registry::GatedVersion> gated_version(store::RunRepo& runs,
                                                   const registry::ModelVersion& v);

}  // namespace corral::server
