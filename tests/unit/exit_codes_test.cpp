// The exit-code table is written once, in error.hpp; its copies (the
// docs/json.md's table, the common schema's list, the man pages' EXIT STATUS)
// are held to it here.
#include "fabric/base/error.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const std::filesystem::path source{FABRIC_SOURCE_DIR};

/// error.hpp's enum, read as its text: name -> code.
std::map<std::string, int> table() {
  auto text = read(source / "lib/common/include/fabric/base/error.hpp");
  auto begin = text.find("enum class exit_code");
  auto end = text.find("};", begin);
  std::istringstream lines(text.substr(begin, end - begin));
  std::map<std::string, int> out;
  for (std::string line; std::getline(lines, line);) {
    auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    auto name = line.substr(line.find_first_not_of(' '), eq - line.find_first_not_of(' '));
    out[name] = std::stoi(line.substr(eq + 3));
  }
  return out;
}

TEST(exit_codes, the_enum_and_its_names_agree) {
  auto codes = table();
  ASSERT_GE(codes.size(), 11u);
  for (const auto& [name, code] : codes) EXPECT_EQ(fabric::to_string(static_cast<fabric::exit_code>(code)), name);
}

TEST(exit_codes, the_docs_table_is_error_hpps) {
  auto docs = read(source / "docs/json.md");
  std::map<std::string, int> rows;
  std::istringstream lines(docs.substr(docs.find("## Exit codes")));
  for (std::string line; std::getline(lines, line) && !line.starts_with("## JSON");) {
    if (!line.starts_with("| ") || line.starts_with("| code")) continue;
    std::istringstream cells(line.substr(1));
    std::string code, name;
    std::getline(cells, code, '|');
    std::getline(cells, name, '|');
    auto trim = [](std::string s) { return s.substr(s.find_first_not_of(' '), s.find_last_not_of(' ') - s.find_first_not_of(' ') + 1); };
    rows[trim(name)] = std::stoi(trim(code));
  }
  EXPECT_EQ(rows, table());
}

TEST(exit_codes, the_common_schemas_list_is_error_hpps) {
  auto schema = nlohmann::json::parse(read(source / "schemas/common.schema.json"));
  std::vector<int> listed = schema["$defs"]["document"]["properties"]["exit_code"]["enum"];
  std::vector<int> codes;
  for (const auto& [name, code] : table()) codes.push_back(code);
  std::sort(codes.begin(), codes.end());
  EXPECT_EQ(listed, codes);
}

TEST(exit_codes, every_code_a_man_page_lists_is_one_of_the_table) {
  std::set<int> codes;
  for (const auto& [name, code] : table()) codes.insert(code);
  int pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source / "man")) {
    if (entry.path().extension() != ".1") continue;
    ++pages;
    // The page as installed: the statuses every tool shares put in (man/man.cmake).
    auto text = read(entry.path());
    if (auto common = text.find("@EXIT_STATUS_COMMON@"); common != std::string::npos)
      text.replace(common, std::string_view("@EXIT_STATUS_COMMON@").size(), read(source / "man" / "exit-common.roff"));
    auto at = text.find(".SH EXIT STATUS");
    ASSERT_NE(at, std::string::npos) << entry.path();
    std::istringstream lines(text.substr(at, text.find("\n.SH ", at + 1) - at));
    std::set<int> listed;
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with(".B ") && std::isdigit(static_cast<unsigned char>(line[3]))) listed.insert(std::stoi(line.substr(3)));
    for (int c : listed) EXPECT_TRUE(codes.contains(c)) << entry.path() << " lists " << c;
    for (int c : {0, 2, 8, 9, 130}) EXPECT_TRUE(listed.contains(c)) << entry.path() << " leaves out " << c;
  }
  EXPECT_EQ(pages, 6);
}

}  // namespace
