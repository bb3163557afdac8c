// Topology derived from what an inventory observed: NVLink domains from peer lists, the
// Corral GPU type of a vendor model name, and stable UUIDs for simulated GPUs.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/inventory.h"
#include "core/agent_protocol.h"
#include "core/result.h"
#include "core/topology.h"

namespace corral::agent {

// The NVLink domain of each GPU (by position in `gpus`): the connected components of
// the peer graph (GPUs linked directly or through an NVSwitch share a domain). Domains
// are numbered 0, 1, ... in order of each component's lowest GPU index. Peers that
// name no GPU of the list are ignored (validate them first).
std::vector<std::int32_t> nvlink_domains(const std::vector<GpuInfo>& gpus);

// The Corral GPU type (core/gpu_type.h) of a model name as NVML reports it, e.g.
// "NVIDIA H100 80GB HBM3" -> "H100", "NVIDIA A100-SXM4-40GB" -> "A100-40GB". Memory
// separates variants whose names do not. NotFound names the model when none matches.
core::Result<std::string> gpu_type_for_model(const std::string& model, std::int64_t memory_mib);

// The vendor's model name of a Corral GPU type of the built-in catalog, as NVML reports
// it (gpu_type_for_model() maps it back to `type`), e.g. "H100" -> "NVIDIA H100 80GB
// HBM3". NotFound for a type outside the catalog.
core::Result<std::string> model_for_gpu_type(const std::string& type);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", a deterministic function of (node, index).
std::string simulated_gpu_uuid(const std::string& node, std::int32_t index);

// What the agent tells corrald when it joins (protocol §1): the node to register, with
// the NVLink domains and GPU types derived from `inventory`, and the inventory itself as
// observed.
core::JoinRequest join_request(const std::string& node, const std::string& agent_url,
                               const core::TopologyLabels& labels, std::int64_t rack_power_cap_w,
                               const NodeInventory& inventory);

// Checks what every adapter must guarantee: indices dense from 0 in order, unique
// UUIDs, peers naming other GPUs of the node. InvalidArgument names the GPU and field.
core::Status validate_inventory(const NodeInventory& inventory);

}  // namespace corral::agent
