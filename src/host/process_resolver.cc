#include "host/process_resolver.h"
