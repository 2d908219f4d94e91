// fabric_inputs DIR [options]: a synthetic fat tree's fabric documents and
// the pairs of its hosts that cross one faulty link, for the report's
// command-line tests and its benchmark (bench/locate.sh), where no
// simulator is needed. Writes DIR/before.json, DIR/after.json (the same
// fabric read later: the faulty link's symbol errors risen by 1000) and
// DIR/bad-pairs ("hostA hostB" for each pair whose route, either way,
// crosses the link; bench/sweep-lines --slow-pairs makes them slow).
//
//   --hosts N            hosts (default 2000)
//   --leaves L --spines S --per-leaf H --pods P --cores C
//                        the shape (synthetic.hpp; default: three levels,
//                        16 hosts a leaf, 16 leaves and 8 aggregation
//                        switches a pod, 8 cores a group, pods for N)
//   --bad NODE:PORT      the faulty link (default agg01-1:17, to core1-01)
#include "fabric-sweep/discover/document.hpp"
#include "fabric-sweep/discover/route.hpp"

#include "synthetic.hpp"

#include "fabric/cli/cli.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace {

namespace sn = sweep::subnet;

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::cerr << "usage: fabric_inputs DIR [--hosts N] [--leaves L --spines S --per-leaf H --pods P --cores C] [--bad NODE:PORT]\n";
    return 2;
  }
  std::string dir = argv[1];
  int hosts = 2000;
  synthetic::shape shape{.leaves = 16, .spines = 8, .hosts = 16, .pods = -1, .cores = 8};
  std::string bad = "agg01-1:17";
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    std::string value = argv[i + 1];
    if (key == "--bad") bad = value;
    else {
      int n = std::stoi(value);
      if (key == "--hosts") hosts = n;
      else if (key == "--leaves") shape.leaves = n;
      else if (key == "--spines") shape.spines = n;
      else if (key == "--per-leaf") shape.hosts = n;
      else if (key == "--pods") shape.pods = n;
      else if (key == "--cores") shape.cores = n;
      else throw std::runtime_error("unknown option " + key);
    }
  }
  if (shape.pods < 0) shape.pods = (hosts + shape.leaves * shape.hosts - 1) / (shape.leaves * shape.hosts);
  shape.host_count = hosts;
  auto before = synthetic::fat_tree(shape);
  auto colon = bad.rfind(':');
  sn::end faulty{synthetic::node_named(before, bad.substr(0, colon)), static_cast<std::uint8_t>(std::stoi(bad.substr(colon + 1)))};
  auto after = before;
  after.taken_at += 600;
  for (auto& p : after.nodes[faulty.node].ports)
    if (p.number == faulty.port) p.counters->set(sn::counter::symbol_errors, 1000);
  auto head = fabric::cli::make_document("fabric-sweep", {});
  write(dir + "/before.json", sn::document_text(head, before));
  write(dir + "/after.json", sn::document_text(head, after));

  sn::index at(before);
  auto link = at.link_of(faulty);
  if (!link) throw std::runtime_error(bad + " is not linked");
  std::vector<std::uint32_t> ca;
  for (std::uint32_t i = 0; i < before.nodes.size(); ++i)
    if (before.nodes[i].type == sn::node_type::ca) ca.push_back(i);
  auto name = [&](std::uint32_t node) {
    const auto& d = before.nodes[node].description;
    return d.substr(0, d.find(' '));
  };
  std::ofstream out(dir + "/bad-pairs");
  sn::route r;
  std::size_t count = 0;
  for (std::size_t a = 0; a < ca.size(); ++a)
    for (std::size_t b = a + 1; b < ca.size(); ++b) {
      bool crosses = false;
      for (auto [x, y] : {std::pair{ca[a], ca[b]}, std::pair{ca[b], ca[a]}}) {
        sn::walk_route(at, {x, 1}, before.nodes[y].ports.front().lid, r);
        crosses = crosses || std::find(r.links.begin(), r.links.end(), *link) != r.links.end();
      }
      if (crosses) {
        out << name(ca[a]) << ' ' << name(ca[b]) << '\n';
        ++count;
      }
    }
  std::cerr << fmt::format("fabric_inputs: {} hosts, {} links; {} of {} pairs cross {}\n", ca.size(), at.links().size(), count,
                           ca.size() * (ca.size() - 1) / 2, bad);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "fabric_inputs: " << e.what() << '\n';
  return 1;
}
