#include "sim/fleet.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/fleet_pools.h"

namespace corral::sim {
namespace {

const std::string kDir = std::string(CORRAL_SOURCE_DIR) + "/examples/fleets/";

TEST(Fleet, LoadsThePollux64Testbed) {
  auto f = load_fleet(kDir + "pollux-64.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->total_gpus(), 64);
  EXPECT_EQ(f->nodes.size(), 16u);
  EXPECT_EQ(f->max_node_gpus(), 4);
  EXPECT_EQ(f->max_nvlink_domain_gpus(), 1);  // T4s: no NVLink
  ASSERT_EQ(f->gpu_types.size(), 1u);
  EXPECT_EQ(f->gpu_types[0].id.value, "T4");
  // 4 nodes per leaf: 4 leaves, one spine.
  EXPECT_EQ(f->nodes[0].labels.leaf, f->nodes[3].labels.leaf);
  EXPECT_NE(f->nodes[3].labels.leaf, f->nodes[4].labels.leaf);
  EXPECT_EQ(f->nodes[0].labels.spine, f->nodes[15].labels.spine);
  auto price = f->prices.price_per_gpu_hour(core::GpuTypeId("T4"), "us-east-1", false);
  ASSERT_TRUE(price.ok());
  EXPECT_EQ(*price, 980'000);
}

TEST(Fleet, LoadsTheTenThousandGpuFleetWithNvl72Racks) {
  auto f = load_fleet(kDir + "fleet-10k.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->total_gpus(), 10'000);
  EXPECT_EQ(f->gpus_of_type(core::GpuTypeId("GB200")), 864);
  EXPECT_EQ(f->max_nvlink_domain_gpus(), 72);  // one NVL72 rack
  EXPECT_EQ(f->max_node_gpus(), 8);
  EXPECT_EQ(f->failures.mtbf_per_gpu, core::seconds(50'000 * 3600));
  // H100 racks of 4 nodes carry the 40 kW cap.
  bool capped = false;
  for (const core::Rack& r : f->racks)
    capped |= r.name.starts_with("h100") && r.power_cap_watts == 40'000;
  EXPECT_TRUE(capped);
}

TEST(Fleet, SmallFleetHasPcieNvlinkPairsAndTenantTree) {
  auto f = load_fleet(kDir + "small-4node.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->total_gpus(), 32);
  const core::Node& pcie = f->nodes[2];
  ASSERT_EQ(pcie.id.value, "pcie-00000");
  EXPECT_EQ(pcie.gpus[1].nvlink_domain, 0);
  EXPECT_EQ(pcie.gpus[2].nvlink_domain, 1);
  ASSERT_EQ(f->tenants.size(), 4u);
  EXPECT_EQ(f->tenants[1].parent, core::TenantId("research"));
  EXPECT_EQ(f->tenants[1].quota_for(core::GpuTypeId("A100-80GB")).guaranteed_milli, 8'000);
  EXPECT_EQ(f->tenants[1].quota_for(core::GpuTypeId("L40S")).guaranteed_milli, 0);
}

// Every example loads, and its nodes and racks are the pool expansion's that the
// agent's fleet emulator reads (core::parse_fleet_pools), node for node.
TEST(Fleet, EveryExampleFleetLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    SCOPED_TRACE(entry.path().string());
    auto f = load_fleet(entry.path().string());
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    EXPECT_GT(f->total_gpus(), 0);
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto pools = core::parse_fleet_pools(text.str(), entry.path().string());
    ASSERT_TRUE(pools.ok()) << pools.status().to_string();
    EXPECT_EQ(pools->nodes, f->nodes);
    EXPECT_EQ(pools->racks, f->racks);
    EXPECT_EQ(pools->gpu_types, f->gpu_types);
    ++count;
  }
  EXPECT_GE(count, 5);
}

TEST(Fleet, PhillyPerVcFleetPartitionsByQuota) {
  auto f = load_fleet(kDir + "philly-2816-pervc.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->total_gpus(), 2816);
  std::int64_t guaranteed = 0;
  for (const core::Tenant& t : f->tenants) {
    const core::Quota& q = t.quota_for(core::GpuTypeId("P100"));
    guaranteed += q.guaranteed_milli / 1000;
    EXPECT_EQ(q.borrow_limit_milli, 0) << t.id.value;
  }
  EXPECT_EQ(guaranteed, 2816);
}

TEST(Fleet, BadInputNamesTheFieldPath) {
  const std::string pool = "pools:\n  - {name: p, gpu_type: H100, nodes: 2, gpus_per_node: 8}\n";
  struct Case {
    std::string name, yaml, field, message;
  };
  const std::vector<Case> cases = {
      {"no pools", "name: x\n", "pools", "is required"},
      {"zero gpus", "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 0}\n",
       "pools[0].gpus_per_node", "must be between 1 and 64, got 0"},
      {"unknown type", "pools:\n  - {name: p, gpu_type: K9000, nodes: 1, gpus_per_node: 8}\n",
       "pools[0].gpu_type", "unknown GPU type 'K9000'"},
      {"domain does not divide",
       "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 8, nvlink_domain_gpus: 3}\n",
       "pools[0].nvlink_domain_gpus", "must divide gpus_per_node (8), got 3"},
      {"typo", "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpu_per_node: 8}\n",
       "pools[0].gpus_per_node", "is required"},
      {"unknown key", pool + "colour: blue\n", "colour", "unknown field"},
      {"not a number", pool + "failures: {mtbf_hours_per_gpu: lots}\n",
       "failures.mtbf_hours_per_gpu", "must be a number, got 'lots'"},
      {"bad parent", pool + "tenants:\n  - {name: a, parent: org}\n", "tenants[0].parent",
       "unknown tenant 'org'"},
      {"quota on absent type", pool + "tenants:\n  - {name: a, guaranteed: {T4: 2}}\n",
       "tenants[0].guaranteed.T4", "no pool has GPU type 'T4'"},
      {"bad price", pool + "prices: {per_gpu_hour_usd: {H100: -1}}\n",
       "prices.per_gpu_hour_usd.H100", "must be a price >= 0 in USD"},
      {"bad rule", pool + "trace_tenants: {guarantee: most}\n", "trace_tenants.guarantee",
       "must be 'equal' or 'none', got 'most'"},
      {"yaml syntax", "pools: [\n", "(yaml)", "line"},
      {"pool region not a dns label",
       "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 8, region: EU_West}\n",
       "pools[0].region", "must be a DNS label"},
      {"fleet region not a dns label", "region: ''\n" + pool, "region", "must be a DNS label"},
      {"job region nowhere", pool + "job_regions: {tenants: {nlp: mars}}\n",
       "job_regions.tenants.nlp", "no pool is in region 'mars' (the pools' regions: local)"},
      {"job region fraction", pool + "job_regions: {fraction: 1.5}\n", "job_regions.fraction",
       "must be between 0 and 1, got 1.5"},
      {"job region typo", pool + "job_regions: {share: 0.5}\n", "job_regions.share",
       "unknown field"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto f = parse_fleet(c.yaml, "f.yaml");
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_EQ(f.status().field(), c.field);
    EXPECT_NE(f.status().message().find(c.message), std::string::npos) << f.status().to_string();
    EXPECT_TRUE(f.status().message().starts_with("f.yaml: ")) << f.status().to_string();
  }
}

// Pools name their regions (the fleet's region is the default); nodes carry them.
TEST(Fleet, LoadsTheMultiRegionFleet) {
  auto f = load_fleet(kDir + "multi-region.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->total_gpus(), 320);
  EXPECT_EQ(f->region_gpus(), (std::vector<std::pair<std::string, std::int64_t>>{
                                  {"ap-south", 64}, {"eu-west", 128}, {"us-east", 128}}));
  for (const core::Node& n : f->nodes) {
    const std::string pool = n.id.value.substr(0, 3);
    const std::string want = pool == "use" ? "us-east" : pool == "euw" ? "eu-west" : "ap-south";
    EXPECT_EQ(n.labels.region, want) << n.id.value;
  }
  EXPECT_EQ(f->job_regions.tenants.at(core::TenantId("nlp")), "eu-west");
  EXPECT_DOUBLE_EQ(f->job_regions.fraction, 0.25);
  // A pool without a region of its own is in the fleet's.
  auto one = parse_fleet(
      "region: eu-west\npools:\n  - {name: a, gpu_type: H100, nodes: 1, gpus_per_node: 8}\n"
      "  - {name: b, gpu_type: H100, nodes: 1, gpus_per_node: 8, region: us-east}\n",
      "f.yaml");
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->nodes[0].labels.region, "eu-west");
  EXPECT_EQ(one->nodes[1].labels.region, "us-east");
}

// A trace's own region stays; the tenant rule comes next; of the rest, about `fraction`
// are bound, by the regions' sizes, the same way for the same seed.
TEST(Fleet, AssignRegionsByTheTraceThenTheRule) {
  auto f = load_fleet(kDir + "multi-region.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  std::vector<TraceJob> jobs(4000);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].name = "j" + std::to_string(i);
    jobs[i].tenant = core::TenantId(i % 4 == 0 ? "nlp" : "other");
  }
  jobs[1].region = "ap-south";
  auto regions = assign_regions(*f, jobs, 7);
  ASSERT_TRUE(regions.ok()) << regions.status().to_string();
  EXPECT_EQ((*regions)[0], "eu-west");
  EXPECT_EQ((*regions)[1], "ap-south");
  std::map<std::string, int> drawn;
  for (std::size_t i = 2; i < jobs.size(); ++i) {
    if (i % 4 != 0) drawn[(*regions)[i]] += 1;
  }
  const int others = 2999;
  EXPECT_NEAR(drawn[""], others * 0.75, others * 0.05);
  // us-east and eu-west have twice ap-south's GPUs.
  EXPECT_NEAR(drawn["us-east"], others * 0.25 * 0.4, others * 0.03);
  EXPECT_NEAR(drawn["ap-south"], others * 0.25 * 0.2, others * 0.03);
  auto again = assign_regions(*f, jobs, 7);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *regions);

  jobs[3].region = "mars";
  auto bad = assign_regions(*f, jobs, 7);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "region");
  EXPECT_NE(bad.status().message().find("job j3 asks for region 'mars'"), std::string::npos)
      << bad.status().to_string();
}

TEST(Fleet, TraceTenantsGetAnEqualGuaranteeByRule) {
  auto f = load_fleet(kDir + "pollux-64.yaml");
  ASSERT_TRUE(f.ok());
  auto tenants = resolve_tenants(
      *f, {core::TenantId("b"), core::TenantId("a"), core::TenantId("c"), core::TenantId("a")});
  ASSERT_TRUE(tenants.ok()) << tenants.status().to_string();
  ASSERT_EQ(tenants->size(), 3u);
  EXPECT_EQ((*tenants)[0].id.value, "a");
  EXPECT_EQ((*tenants)[0].quota_for(core::GpuTypeId("T4")).guaranteed_milli, 64 / 3 * 1000);
  EXPECT_EQ((*tenants)[0].quota_for(core::GpuTypeId("T4")).borrow_limit_milli,
            core::kUnlimitedMilli);
  EXPECT_DOUBLE_EQ((*tenants)[2].weight, 1.0);
}

// A tenant's priority-class caps, as corrald's tenant config sets them (issue 38 item 9):
// the simulator's decide() holds the same caps.
TEST(Fleet, TenantPriorityClassesCapTiers) {
  auto f = parse_fleet(
      "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 8}\ntenants:\n  - {name: "
      "a, priority_classes: {production: 4, standard: unlimited}}\n",
      "f.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  auto tenants = resolve_tenants(*f, {core::TenantId("a")});
  ASSERT_TRUE(tenants.ok()) << tenants.status().to_string();
  EXPECT_EQ((*tenants)[0].max_gpus_at(2), 4);
  EXPECT_EQ((*tenants)[0].max_gpus_at(1), core::kUnlimited);
  EXPECT_EQ((*tenants)[0].max_gpus_at(0), 0);  // preemptible is not its class
  auto bad = parse_fleet(
      "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 8}\ntenants:\n  - {name: "
      "a, priority_classes: {gold: 4}}\n",
      "f.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().to_string().find("unknown priority class"), std::string::npos)
      << bad.status().to_string();
}

TEST(Fleet, UnknownTraceTenantWithoutRuleIsAnError) {
  auto f = parse_fleet(
      "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 8}\ntenants:\n  - {name: "
      "a}\n",
      "f.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_TRUE(resolve_tenants(*f, {core::TenantId("a")}).ok());
  auto bad = resolve_tenants(*f, {core::TenantId("zz")});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'zz'"), std::string::npos);
}

}  // namespace
}  // namespace corral::sim
