// SPDX-License-Identifier: GPL-2.0
int main(void) { return 0; }
