#include "cycle/scheduler_config.h"

#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "cycle/internal/json_codec.h"
#include "cycle/internal/knobs.h"

namespace corral::cycle {

nlohmann::json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() != "!") {
        if (s == "true" || s == "false") return s == "true";
        std::int64_t i = 0;
        double d = 0;
        if (YAML::convert<std::int64_t>::decode(node, i)) return i;
        if (YAML::convert<double>::decode(node, d)) return d;
      }
      return s;
    }
    default:
      return nullptr;
  }
}

core::Result<sched::SchedulerConfig> apply_scheduler_section(const YAML::Node& section,
                                                             sched::SchedulerConfig base) {
  if (!section.IsMap()) return core::invalid_argument("scheduler", "must be a map");
  detail::Json knobs;
  try {
    knobs = yaml_to_json(section);
  } catch (const YAML::Exception& e) {
    return core::invalid_argument("scheduler", std::string("keys must be strings: ") + e.what());
  }
  detail::ReadErrors errors;
  detail::read_fields(knobs, "scheduler", base, errors, kSchedulerLoopKeys);
  if (!errors.ok()) return errors.status();
  return base;
}

core::Result<sched::SchedulerConfig> load_scheduler_config(const std::string& path,
                                                           sched::SchedulerConfig base) {
  std::ifstream in(path);
  if (!in) return core::invalid_argument("--config", "cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    return core::invalid_argument("--config", path + " is not valid YAML: " + e.what());
  }
  const YAML::Node& file = root;  // const: looking a key up must not add it
  if (!file.IsMap() || !file["scheduler"]) {
    return core::invalid_argument("--config", path + " has no scheduler: section");
  }
  return apply_scheduler_section(file["scheduler"], std::move(base));
}

}  // namespace corral::cycle
