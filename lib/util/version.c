/* The library's version, as it was built (mapscope/version.h has the headers'). */
#include <mapscope/version.h>

#include "util/log.h"

MS_EXPORT const char *ms_version(unsigned int *number)
{
	if (number)
		*number = MAPSCOPE_VERSION_NUMBER;
	return MAPSCOPE_VERSION;
}
