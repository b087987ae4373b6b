/* SPDX-License-Identifier: GPL-2.0 */
/* What the parts of tests/unit/function.c share. */
#ifndef RR_FUNCTION_TEST_H
#define RR_FUNCTION_TEST_H

/* rr_fn_setting_*: function_settings.c. */
int run_settings_tests(void);

#endif /* RR_FUNCTION_TEST_H */
