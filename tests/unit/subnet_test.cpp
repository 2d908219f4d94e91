// The fabric model, its route walk and its document, read as hostile input.
#include "fabric-sweep/discover/document.hpp"
#include "fabric-sweep/discover/route.hpp"
#include "fabric-sweep/discover/subnet.hpp"

#include "../subnet/synthetic.hpp"

#include "fabric/base/error.hpp"
#include "fabric/cli/cli.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace sn = sweep::subnet;

namespace {

sn::fabric two_level() { return synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 4}); }

std::uint16_t lid_of(const sn::fabric& f, std::string_view name) {
  return f.nodes[synthetic::node_named(f, name)].ports.front().lid;
}

sn::end host_end(const sn::fabric& f, std::string_view name) { return {synthetic::node_named(f, name), 1}; }

std::string text_of(const sn::fabric& f) {
  return sn::document_text(fabric::cli::make_document("fabric-sweep", {}), f);
}

/// The error line of reading `text`; empty when it read.
std::string read_error(std::string_view text) {
  try {
    sn::read_document(text);
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
    return e.what();
  }
  return {};
}

bool any_note(const sn::reading& r, std::string_view part) {
  for (const auto& n : r.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(subnet, widths_and_speeds_by_their_words_and_order) {
  EXPECT_EQ(sn::widest(1 | 2), 2);  // 4X over 1X
  EXPECT_EQ(sn::widest(1 | 16), 16);  // 2X over 1X
  EXPECT_EQ(sn::lanes(8), 12);
  EXPECT_EQ(sn::fastest(7 | 32), 32);  // EDR over QDR
  EXPECT_EQ(sn::width_bit("12X"), 8);
  EXPECT_EQ(sn::speed_bit("NDR"), 128);
  EXPECT_FALSE(sn::speed_bit("FDR10"));
  EXPECT_EQ(sn::width_words(3), (std::vector<std::string_view>{"1X", "4X"}));
  EXPECT_DOUBLE_EQ(sn::lane_gbps(32), 25.78125);
}

TEST(subnet, guids_are_0x_and_hex_digits_only) {
  EXPECT_EQ(sn::guid_of("0x0002c90300a1b2c3"), 0x0002c90300a1b2c3ULL);
  EXPECT_EQ(sn::guid_text(0x2c9), "0x00000000000002c9");
  for (const char* bad : {"", "0x", "12", "0xg1", "0x-1", "0x+1", "0x00000000000000001", " 0x1"}) EXPECT_FALSE(sn::guid_of(bad)) << bad;
}

TEST(subnet, index_finds_nodes_ports_and_links) {
  auto f = two_level();
  sn::index at(f);
  EXPECT_EQ(at.links().size(), 16u + 8u);  // 16 host links, 4 leaves x 2 spines
  auto host = host_end(f, "host0005 mlx5_0");
  auto by_lid = at.port_of_lid(lid_of(f, "host0005 mlx5_0"));
  ASSERT_TRUE(by_lid);
  EXPECT_EQ(*by_lid, host);
  EXPECT_EQ(at.port_of_guid(f.nodes[host.node].ports.front().guid), host);
  auto l = at.link_of(host);
  ASSERT_TRUE(l);
  EXPECT_EQ(at.at(at.far_end(*l, host).node).description, "leaf02");
  EXPECT_EQ(at.links_of(synthetic::node_named(f, "leaf02")).size(), 6u);
  EXPECT_FALSE(at.node_of(0x1234));
  EXPECT_FALSE(at.port_of_lid(60000));
}

TEST(route, walks_the_tables_both_ways_as_ibtracert) {
  auto f = two_level();
  sn::index at(f);
  auto r = sn::walk_route(at, host_end(f, "host0001 mlx5_0"), lid_of(f, "host0009 mlx5_0"));
  ASSERT_TRUE(r.arrived()) << r.reason;
  ASSERT_EQ(r.links.size(), 4u);  // host, leaf01 up, down to leaf03, host
  auto same_leaf = sn::walk_route(at, host_end(f, "host0001 mlx5_0"), lid_of(f, "host0002 mlx5_0"));
  EXPECT_TRUE(same_leaf.arrived());
  EXPECT_EQ(same_leaf.links.size(), 2u);
  auto to_switch = sn::walk_route(at, host_end(f, "host0001 mlx5_0"), lid_of(f, "spine02"));
  EXPECT_FALSE(to_switch.arrived());  // the synthetic tables route CAs only
  EXPECT_EQ(to_switch.ended, sn::route_end::hole);
}

TEST(route, names_a_hole_a_loop_and_a_dead_end) {
  auto f = two_level();
  auto dlid = lid_of(f, "host0009 mlx5_0");
  auto leaf = synthetic::node_named(f, "leaf01");
  auto spine = synthetic::node_named(f, "spine02");
  {
    auto g = f;
    g.nodes[leaf].lft[dlid] = sn::no_port;
    sn::index at(g);
    auto r = sn::walk_route(at, host_end(g, "host0001 mlx5_0"), dlid);
    EXPECT_EQ(r.ended, sn::route_end::hole);
    EXPECT_NE(r.reason.find("leaf01 has no entry for LID"), std::string::npos) << r.reason;
  }
  {
    auto g = f;
    g.nodes[leaf].lft[dlid] = 6;    // up to spine02
    g.nodes[spine].lft[dlid] = 1;   // and back down to leaf01
    sn::index at(g);
    auto r = sn::walk_route(at, host_end(g, "host0001 mlx5_0"), dlid);
    EXPECT_EQ(r.ended, sn::route_end::loop);
    EXPECT_NE(r.reason.find("loops back to leaf01"), std::string::npos) << r.reason;
  }
  {
    auto g = f;
    g.nodes[leaf].lft[dlid] = 20;  // a port with nothing behind it
    sn::index at(g);
    auto r = sn::walk_route(at, host_end(g, "host0001 mlx5_0"), dlid);
    EXPECT_EQ(r.ended, sn::route_end::dead_end);
    EXPECT_NE(r.reason.find("leaf01 port 20, which is not linked"), std::string::npos) << r.reason;
  }
  {
    auto g = f;
    g.nodes[leaf].lft[dlid] = 2;  // to host0002, not the destination
    sn::index at(g);
    auto r = sn::walk_route(at, host_end(g, "host0001 mlx5_0"), dlid);
    EXPECT_EQ(r.ended, sn::route_end::dead_end);
  }
}

TEST(fabric_document, writes_and_reads_back_the_same_model) {
  auto f = two_level();
  f.silent.push_back({f.nodes[0].guid, 30, "the node behind spine01 port 30 did not answer"});
  f.nodes[1].error = "its forwarding table did not answer (LIDs 0-63)";
  f.nodes.back().ports.front().counters->set(sn::counter::symbol_errors, 1ULL << 40);
  auto text = text_of(f);
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line";
  auto r = sn::read_document(text);
  EXPECT_TRUE(r.notes.empty()) << r.notes.front();
  EXPECT_EQ(r.model, f);
}

TEST(fabric_document, a_text_that_is_no_document_is_one_error_line) {
  auto text = text_of(two_level());
  EXPECT_NE(read_error(text.substr(0, text.size() / 2)).find("not a fabric document: not whole JSON"), std::string::npos);
  EXPECT_NE(read_error("").find("not a fabric document"), std::string::npos);
  EXPECT_NE(read_error("[1,2]").find("not an object"), std::string::npos);
  EXPECT_NE(read_error(std::string(100000, '[')).find("not a fabric document"), std::string::npos);
  auto bytes = text;
  bytes.replace(bytes.find("leaf01"), 2, "\xff\xfe");
  EXPECT_NE(read_error(bytes).find("not UTF-8"), std::string::npos);
  auto other = text;
  other.replace(other.find("fabric-sweep-discover/1"), 23, "fabric-sweep/1");
  EXPECT_NE(read_error(other).find("its schema is 'fabric-toolkit/fabric-sweep/1'"), std::string::npos);
  auto failed = fabric::cli::make_document("fabric-sweep", {fabric::exit_code::no_device, "no InfiniBand port"});
  failed["schema"] = sn::document_schema;
  EXPECT_NE(read_error(failed.dump()).find("its walk failed: no InfiniBand port"), std::string::npos);
}

TEST(fabric_document, a_field_of_the_wrong_type_is_named_by_its_path) {
  auto f = two_level();
  auto j = nlohmann::json::parse(text_of(f));
  j["results"][3]["ports"][1]["lid"] = "3";
  EXPECT_NE(read_error(j.dump()).find("results[3].ports[1].lid: not a whole number"), std::string::npos) << read_error(j.dump());
  j = nlohmann::json::parse(text_of(f));
  j["results"][0]["node_guid"] = 7;
  EXPECT_NE(read_error(j.dump()).find("results[0].node_guid: not a string"), std::string::npos);
  j = nlohmann::json::parse(text_of(f));
  j["results"][0]["lft"][2] = -1;
  EXPECT_NE(read_error(j.dump()).find("results[0].lft: not a whole number 0-255"), std::string::npos);
  j = nlohmann::json::parse(text_of(f));
  j["results"][0]["ports"][0]["width"] = "3X";
  EXPECT_NE(read_error(j.dump()).find("'3X' is not one of its words"), std::string::npos);
  j = nlohmann::json::parse(text_of(f));
  j["summary"].erase("taken_at");
  EXPECT_NE(read_error(j.dump()).find("summary.taken_at: missing"), std::string::npos);
}

TEST(fabric_document, what_a_walk_cannot_mean_is_left_out_and_noted) {
  auto f = two_level();
  auto j = nlohmann::json::parse(text_of(f));
  auto host = j["results"].size() - 1;
  j["results"].push_back(j["results"][host]);  // a GUID twice
  j["results"][host]["description"] = std::string(10 << 20, 'x');
  j["results"][0]["lft"][9] = 30;  // beyond the 4 ports it is cut to below
  j["results"][0]["port_count"] = 4;
  j["results"][0]["ports"] = nlohmann::json::array({j["results"][0]["ports"][0], j["results"][0]["ports"][1]});
  auto t0 = std::chrono::steady_clock::now();
  auto r = sn::read_document(j.dump());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_TRUE(any_note(r, "given twice, the first kept"));
  EXPECT_TRUE(any_note(r, "a description of 10485760 bytes, cut to 64"));
  EXPECT_TRUE(any_note(r, "forwarding table entries beyond its 4 ports"));
  EXPECT_TRUE(any_note(r, "whose far end does not name it back"));  // spine01's other leaves lost their link back
  EXPECT_EQ(r.model.nodes.size(), f.nodes.size());
  EXPECT_EQ(r.model.nodes[host].description.size(), sn::max_description_bytes);
  EXPECT_EQ(r.model.nodes[0].lft[9], sn::no_port);
  // What is left routes still, or says why not: never a crash.
  sn::index at(r.model);
  for (std::uint32_t a = 0; a < r.model.nodes.size(); ++a)
    for (std::uint16_t lid = 0; lid < 40; ++lid) (void)sn::walk_route(at, {a, 1}, lid);
}

TEST(fabric_document, a_port_linked_to_itself_or_elsewhere_is_no_link) {
  auto f = two_level();
  auto host = synthetic::node_named(f, "host0001 mlx5_0");
  f.nodes[host].ports.front().peer = sn::peer_ref{f.nodes[host].guid, 1};  // itself
  auto leaf = synthetic::node_named(f, "leaf02");
  f.nodes[leaf].ports[1].peer = sn::peer_ref{f.nodes[synthetic::node_named(f, "host0009 mlx5_0")].guid, 1};  // taken
  auto r = sn::read_document(text_of(f));
  EXPECT_TRUE(any_note(r, "4 link ends whose far end does not name it back")) << (r.notes.empty() ? "" : r.notes.front());
  sn::index at(r.model);
  EXPECT_FALSE(at.link_of({host, 1}));
  auto route = sn::walk_route(at, {host, 1}, lid_of(f, "host0009 mlx5_0"));
  EXPECT_EQ(route.ended, sn::route_end::no_source);
}

TEST(fabric_document, out_of_range_tables_and_lids) {
  auto f = two_level();
  auto j = nlohmann::json::parse(text_of(f));
  j["results"][0]["lft"] = nlohmann::json::array();
  for (int i = 0; i < 70000; ++i) j["results"][0]["lft"].push_back(1);
  j["results"].back()["ports"][0]["lid"] = 0xC000;
  auto r = sn::read_document(j.dump());
  EXPECT_TRUE(any_note(r, "a forwarding table longer than 49152 LIDs, cut"));
  EXPECT_TRUE(any_note(r, "is not a unicast LID"));
  EXPECT_EQ(r.model.nodes[0].lft.size(), sn::max_lft);
  j["results"][1]["lft"] = nlohmann::json::array();
  j["results"].back()["lft"] = nlohmann::json::array({1});
  EXPECT_NE(read_error(j.dump()).find("a table of a node that is not a switch"), std::string::npos);
}

TEST(fabric_document, a_file_that_cannot_be_read_names_itself) {
  try {
    sn::read_document_file("/nonexistent/fabric.json");
    FAIL();
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/fabric.json: No such file"), std::string::npos);
  }
  EXPECT_THROW(sn::read_document_file("/"), fabric::error);
}
