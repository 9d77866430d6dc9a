// Minimal CSV reading for traces and throughput tables (no quoting: none of
// the formats we read has commas inside fields).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace crius::scheduler {

std::vector<std::string> split_csv_line(std::string_view line);
bool parse_double(std::string_view s, double& out);
bool parse_int(std::string_view s, int& out);

}  // namespace crius::scheduler
