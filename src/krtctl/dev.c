// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "dev" object, the RDMA devices krt tracks.
 */
#include <errno.h>
#include <string.h>
#include <linux/krt.h>
#include "krtctl.h"

const char *dev_state_name(u32 state)
{
	switch (state) {
	case KRT_DEV_STATE_USABLE:
		return "usable";
	case KRT_DEV_STATE_DISABLED:
		return "disabled";
	case KRT_DEV_STATE_UNUSABLE:
		return "unusable";
	}
	return "unknown";
}

static const struct {
	int type;
	const char *key;	/* JSON key and plain-text label */
} dev_u32_fields[] = {
	{ KRT_A_DEV_MAX_FR_PAGES,	"max_fr_pages" },
	{ KRT_A_DEV_MAX_QP_WR,		"max_qp_wr" },
	{ KRT_A_DEV_MAX_SEND_SGE,	"max_send_sge" },
	{ KRT_A_DEV_MAX_RECV_SGE,	"max_recv_sge" },
	{ KRT_A_DEV_MAX_INLINE,		"max_inline" },
	{ KRT_A_DEV_MAX_CQE,		"max_cqe" },
	{ KRT_A_DEV_COMP_VECTORS,	"comp_vectors" },
	{ KRT_A_DEV_PORTS,		"ports" },
};

static const struct nl_attr_pol dev_pol[KRT_A_DEV_MAX + 1] = {
	[KRT_A_DEV_NAME]	= { MNL_TYPE_NUL_STRING, KRT_DEV_NAME_MAX },
	[KRT_A_DEV_INDEX]	= { MNL_TYPE_U32 },
	[KRT_A_DEV_STATE]	= { MNL_TYPE_U32 },
	[KRT_A_DEV_REASON]	= { MNL_TYPE_NUL_STRING },
	[KRT_A_DEV_ENABLED]	= { MNL_TYPE_U8 },
	[KRT_A_DEV_FRWR]	= { MNL_TYPE_U8 },
	[KRT_A_DEV_MAX_FR_PAGES] = { MNL_TYPE_U32 },
	[KRT_A_DEV_MAX_QP_WR]	= { MNL_TYPE_U32 },
	[KRT_A_DEV_MAX_SEND_SGE] = { MNL_TYPE_U32 },
	[KRT_A_DEV_MAX_RECV_SGE] = { MNL_TYPE_U32 },
	[KRT_A_DEV_MAX_INLINE]	= { MNL_TYPE_U32 },
	[KRT_A_DEV_MAX_CQE]	= { MNL_TYPE_U32 },
	[KRT_A_DEV_COMP_VECTORS] = { MNL_TYPE_U32 },
	[KRT_A_DEV_PORTS]	= { MNL_TYPE_U32 },
	[KRT_A_DEV_NODE_GUID]	= { MNL_TYPE_U64 },
	[KRT_A_DEV_SEND_INV]	= { MNL_TYPE_U8 },
	[KRT_A_DEV_SG_GAPS]	= { MNL_TYPE_U8 },
	[KRT_A_DEV_MEM_USED]	= { MNL_TYPE_U64 },
	[KRT_A_DEV_MEM_BUDGET]	= { MNL_TYPE_U64 },
	[KRT_A_DEV_MEM_TOTAL]	= { MNL_TYPE_U64 },
};

struct nl_policy dev_policy = { "dev", KRT_A_DEV_MAX, dev_pol, 0 };

/* memory accounting, shown when the kernel sends it */
static const struct nl_field dev_mem_fields[] = {
	{ KRT_A_DEV_MEM_USED,	"mem_used" },
	{ KRT_A_DEV_MEM_TOTAL,	"mem_total" },
	{ KRT_A_DEV_MEM_BUDGET,	"mem_budget" },
};

/* Print one device; @w is NULL for plain text, @key names a JSON member. */
void dev_print(const struct nlattr **tb, struct jw *w, const char *key)
{
	struct pr p = { .w = w };
	size_t i;

	pr_obj(&p, key, "name", attr_str(tb, KRT_A_DEV_NAME));
	pr_u64(&p, "index", attr_u32(tb, KRT_A_DEV_INDEX));
	pr_word(&p, "state", dev_state_name(attr_u32(tb, KRT_A_DEV_STATE)));
	if (tb[KRT_A_DEV_REASON])
		pr_str(&p, "reason", attr_str(tb, KRT_A_DEV_REASON));
	pr_bool(&p, "enabled", attr_u8(tb, KRT_A_DEV_ENABLED));
	pr_bool(&p, "frwr", attr_u8(tb, KRT_A_DEV_FRWR));
	pr_bool(&p, "send_inv", attr_u8(tb, KRT_A_DEV_SEND_INV));
	pr_bool(&p, "sg_gaps", attr_u8(tb, KRT_A_DEV_SG_GAPS));
	pr_break(&p);
	for (i = 0; i < ARRAY_SIZE(dev_u32_fields); i++)
		pr_u64(&p, dev_u32_fields[i].key, attr_u32(tb, dev_u32_fields[i].type));
	pr_hex64(&p, "node_guid", attr_u64(tb, KRT_A_DEV_NODE_GUID));
	pr_fields(&p, tb, dev_mem_fields, ARRAY_SIZE(dev_mem_fields));
	pr_obj_end(&p);
}

static const char *dev_attr_name(unsigned int type)
{
	static const char *const names[KRT_A_DEV_MAX + 1] = {
		[KRT_A_DEV_NAME]	= "name",
		[KRT_A_DEV_ENABLED]	= "enabled",
	};

	return type <= KRT_A_DEV_MAX ? names[type] : NULL;
}

static int dev_show_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_DEV_MAX + 1];

	if (nl_parse_attrs(nlh, tb, &dev_policy))
		return MNL_CB_OK;
	dev_print(tb, data, NULL);
	return MNL_CB_OK;
}

static int dev_show(int argc, char **argv)
{
	struct nlmsghdr *nlh;

	if (argc > 1)
		return usage_error("dev show: unexpected argument", argv[1]);
	nlh = nl_msg(&krtctl, KRT_CMD_DEV_GET, argc ? 0 : NLM_F_DUMP);
	if (argc) {
		if (strlen(argv[0]) >= KRT_DEV_NAME_MAX)
			return usage_error("device name is too long", argv[0]);
		mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, argv[0]);
	}
	return nl_show(nlh, dev_show_cb, "dev show");
}

static int parse_onoff(const char *arg, const char *what, u8 *val)
{
	if (!strcmp(arg, "on") || !strcmp(arg, "yes") || !strcmp(arg, "1")) {
		*val = 1;
		return 0;
	}
	if (!strcmp(arg, "off") || !strcmp(arg, "no") || !strcmp(arg, "0")) {
		*val = 0;
		return 0;
	}
	return usage_error(what, arg);
}

static int dev_set(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	bool any = false;
	u8 en = 0;

	if (argc < 1)
		return usage_error("dev set: missing device name", NULL);
	if (strlen(argv[0]) >= KRT_DEV_NAME_MAX)
		return usage_error("device name is too long", argv[0]);
	nlh = nl_msg(&krtctl, KRT_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, argv[0]);
	for (argc--, argv++; argc > 0; argc -= 2, argv += 2) {
		if (matches(argv[0], "enabled")) {
			if (argc < 2)
				return usage_error("dev set: \"enabled\" needs on or off", NULL);
			if (parse_onoff(argv[1], "enabled: expected on or off, not", &en))
				return 2;
			mnl_attr_put_u8(nlh, KRT_A_DEV_ENABLED, en);
			any = true;
		} else {
			return usage_error("dev set: unknown setting", argv[0]);
		}
	}
	if (!any)
		return usage_error("dev set: nothing to set (enabled on|off)", NULL);
	return nl_report(nl_talk(&krtctl, nlh, NULL, NULL), "dev set");
}

/*
 * save: a device switched off, and with autoenable=N (devices arrive
 * disabled) one switched on.  An unusable device is never enabled.
 */
int dev_save(const struct nlattr **tb, FILE *f, bool autoenable)
{
	const char *name = attr_str(tb, KRT_A_DEV_NAME);
	u32 state = attr_u32(tb, KRT_A_DEV_STATE);

	if (state != KRT_DEV_STATE_DISABLED && (state != KRT_DEV_STATE_USABLE || autoenable))
		return 0;
	if (!batch_word_ok(name)) {
		fprintf(stderr, "krtctl: save: device name \"%s\" %s\n", name,
			"cannot be written in a batch file");
		fprintf(f, "# dev set (unwritable name) enabled %s\n",
			state == KRT_DEV_STATE_USABLE ? "on" : "off");
		return -1;
	}
	fprintf(f, "dev set %s enabled %s\n", name, state == KRT_DEV_STATE_USABLE ? "on" : "off");
	return 0;
}

enum { DEV_SHOW, DEV_LIST, DEV_SET, DEV_HELP, DEV_MAX };

static const char *const dev_verbs[DEV_MAX] = {
	[DEV_SHOW] = "show", [DEV_LIST] = "list", [DEV_SET] = "set", [DEV_HELP] = "help",
};

int cmd_dev(int argc, char **argv)
{
	krtctl.attr_name = dev_attr_name;
	if (argc < 1)
		return dev_show(0, argv);
	switch (match_word(argv[0], dev_verbs, DEV_MAX, "dev")) {
	case DEV_SHOW:
	case DEV_LIST:
		return dev_show(argc - 1, argv + 1);
	case DEV_SET:
		return dev_set(argc - 1, argv + 1);
	case DEV_HELP:
		usage(stdout, "dev");
		return 0;
	case -2:
		return 2;
	}
	return usage_error("dev: unknown command", argv[0]);
}
