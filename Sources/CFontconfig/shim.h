#ifndef PIPELINE_CFONTCONFIG_SHIM_H
#define PIPELINE_CFONTCONFIG_SHIM_H
#include <fontconfig/fontconfig.h>
#endif
