/*
 * op_cases.h — case labels for every op of the roles you name, expanded
 * from ops.def, for the "not a sink" / "not a source" arms of switches
 * over ir_opkind. Define IR_CASE_<ROLE>(name) as `case IR_##name:` for
 * each role the arm takes, then include this file inside the switch:
 *
 *   switch (op->kind) {
 *   case IR_SORT: …                       (every sink, by hand)
 *   #define IR_CASE_SOURCE(name) case IR_##name:
 *   #define IR_CASE_STEP(name) case IR_##name:
 *   #include "op_cases.h"
 *   case IR__COUNT:
 *     break;                              (not a sink)
 *   }
 *
 * An op added to ops.def then joins the arms its ROLE puts it in by
 * itself, and -Wswitch names only the switches that must handle it: a new
 * step is no missing case in a switch over sinks, a new sink is one. The
 * roles left undefined expand to nothing (IR_CASE_IVSOURCE, the interval
 * sources, to IR_CASE_SOURCE's labels); every IR_CASE_* is undefined
 * again at the end, ready for the next switch.
 */
#ifndef IR_CASE_SOURCE
#define IR_CASE_SOURCE(name)
#endif
#ifndef IR_CASE_STEP
#define IR_CASE_STEP(name)
#endif
#ifndef IR_CASE_SINK
#define IR_CASE_SINK(name)
#endif
#ifndef IR_CASE_BREAKER
#define IR_CASE_BREAKER(name)
#endif
/* The INTERVAL sources are sources: a switch that defines IR_CASE_IVSOURCE
 * gives them an arm of their own, else they join IR_CASE_SOURCE's. */
#ifndef IR_CASE_IVSOURCE
#define IR_CASE_IVSOURCE(name) IR_CASE_SOURCE(name)
#endif

#define OP(name, str, role, flags, arity) IR_CASE_##role(name)
#include "ops.def"
#undef OP

#undef IR_CASE_SOURCE
#undef IR_CASE_STEP
#undef IR_CASE_SINK
#undef IR_CASE_BREAKER
#undef IR_CASE_IVSOURCE
