# Every third-party dependency is found here, once. The list is mirrored in
# cmake/fiskaiConfig.cmake.in for consumers of the installed package.
find_package(Threads REQUIRED)
# Debian's default Boost is 1.74, which has no Boost.JSON; 1.81 is installed by name.
find_package(Boost 1.81 REQUIRED COMPONENTS json url filesystem)
find_package(fmt CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
# RE2 gives the filters Go's regexp semantics (RE2 syntax, linear time, no backtracking).
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
# find_package(cnats) fails on Debian (its config names a static library Debian does
# not ship), so nats.c is found through pkg-config.
pkg_check_modules(NATS REQUIRED IMPORTED_TARGET libnats)
# The knowledge base's one SQLite file (FTS5 is compiled into Debian's libsqlite3).
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)

if(FISKAI_BUILD_APPS OR FISKAI_BUILD_EXAMPLES)
  find_package(CLI11 CONFIG REQUIRED)
endif()
if(FISKAI_BUILD_TESTS)
  find_package(Catch2 2 CONFIG REQUIRED)
endif()
