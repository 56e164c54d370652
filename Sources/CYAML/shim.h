// libyaml (Debian's libyaml-dev, Homebrew's libyaml): the YAML 1.1 parser BLEYAML composes its nodes from
// (codec specs, GATT maps, key files, expectation files).
#include <yaml.h>
