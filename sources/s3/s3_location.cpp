#include "sources/s3/s3_location.hpp"

#include <algorithm>
#include <boost/url/parse.hpp>

#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

constexpr std::string_view kScheme = "s3://";

bool valid_bucket_name(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  const auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
  };
  return std::all_of(name.begin(), name.end(), allowed) && name.front() != '.' &&
         name.front() != '-' && name.back() != '.' && name.back() != '-';
}

bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

std::string S3TrialLocation::uri() const {
  std::string text = std::string(kScheme) + bucket;
  if (!prefix.empty()) text += "/" + prefix.substr(0, prefix.size() - 1);
  return text;
}

S3TrialLocation parse_s3_uri(std::string_view uri) {
  if (!uri.starts_with(kScheme)) {
    throw StorageError(std::string(uri) + ": not an S3 URI (s3://bucket/prefix)");
  }
  const std::string_view rest = uri.substr(kScheme.size());
  const auto slash = rest.find('/');
  S3TrialLocation location;
  location.bucket = std::string(rest.substr(0, slash));
  if (!valid_bucket_name(location.bucket)) {
    throw StorageError(std::string(uri) + ": \"" + location.bucket +
                       "\" is not a valid S3 bucket name (3 to 63 characters: a-z, 0-9, '.', '-')");
  }
  if (slash != std::string_view::npos) {
    std::string_view prefix = rest.substr(slash + 1);
    while (prefix.ends_with('/')) prefix.remove_suffix(1);
    if (!prefix.empty()) location.prefix = std::string(prefix) + "/";
  }
  return location;
}

S3Endpoint S3Endpoint::resolve(std::string_view override_url, std::string region,
                               S3Addressing addressing) {
  S3Endpoint endpoint{.base_url = {}, .region = std::move(region)};
  if (override_url.empty()) {
    endpoint.path_style = addressing == S3Addressing::Path;
    return endpoint;
  }
  endpoint.virtual_hosted = addressing == S3Addressing::Virtual;
  const auto parsed = boost::urls::parse_absolute_uri(override_url);
  const std::string shown(override_url);
  if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https") ||
      parsed->host().empty()) {
    throw StorageError("S3 endpoint \"" + shown + "\" is not an http:// or https:// URL");
  }
  if (parsed->has_query() || parsed->has_fragment() || parsed->has_userinfo()) {
    throw StorageError("S3 endpoint \"" + shown +
                       "\" must not carry a query, a fragment or credentials");
  }
  endpoint.base_url = shown;
  while (endpoint.base_url.ends_with('/')) endpoint.base_url.pop_back();
  return endpoint;
}

std::string S3Endpoint::url(std::string_view bucket, std::string_view key,
                            std::string_view query) const {
  std::string text;
  const std::string bucket_name(bucket);
  if (!is_aws() && virtual_hosted) {
    const auto host = base_url.find("://") + 3;  // base_url is an absolute http(s) URL
    text = base_url.substr(0, host) + bucket_name + "." + base_url.substr(host) + "/";
  } else if (!is_aws()) {
    text = base_url + "/" + bucket_name + "/";
  } else if (path_style || bucket.find('.') != std::string_view::npos) {
    text = "https://s3." + region + ".amazonaws.com/" + bucket_name + "/";
  } else {
    text = "https://" + bucket_name + ".s3." + region + ".amazonaws.com/";
  }
  text += s3_uri_encode(key, true);
  if (!query.empty()) text += "?" + std::string(query);
  return text;
}

std::string s3_uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string encoded;
  encoded.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (is_unreserved(byte) || (keep_slash && c == '/')) {
      encoded += c;
    } else {
      encoded += '%';
      encoded += kHex[byte >> 4];
      encoded += kHex[byte & 0x0F];
    }
  }
  return encoded;
}

std::string canonical_query(std::vector<std::pair<std::string, std::string>> parameters) {
  for (auto& [name, value] : parameters) {
    name = s3_uri_encode(name, false);
    value = s3_uri_encode(value, false);
  }
  // Sorted by the encoded bytes, as SigV4 specifies.
  std::sort(parameters.begin(), parameters.end());
  std::string query;
  for (const auto& [name, value] : parameters) {
    if (!query.empty()) query += '&';
    query += name + "=" + value;
  }
  return query;
}

}  // namespace rulestream
