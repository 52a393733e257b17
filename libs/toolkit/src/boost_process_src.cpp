// Boost.Process v2 is compiled once, here, rather than header-only in every user.
#include <boost/process/v2/src.hpp>
