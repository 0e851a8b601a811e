/* SPDX-License-Identifier: MPL-2.0 */
/* not_core.h - included by every header outside common/core (the I/O layer, the
 * configuration, the worker skeleton), so that pure code cannot reach them: the core is
 * compiled with RT_CORE_BUILD, and a core file that includes such a header does not build.
 * The core's inputs come in as plain values and structs (common/policy.h reads the
 * configuration for it). */
#ifndef RETRIG_COMMON_NOT_CORE_H
#define RETRIG_COMMON_NOT_CORE_H

#ifdef RT_CORE_BUILD
#error                                                                                             \
    "common/core is pure: it must not include common/io/ or common/ headers (see docs/ARCHITECTURE.md)"
#endif

#endif
