// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "save", the running configuration as a "krtctl -b" file: the
 * devices switched off, the listeners, the outbound peers with their
 * settings, read by the dumps "dev show", "listen show" and "peer show"
 * make.  Written whole or not at all: a failing dump leaves FILE as it
 * was, and FILE is replaced by rename().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/krt.h>
#include "krtctl.h"

struct save {
	FILE *f;
	bool autoenable;	/* the module's: devices arrive enabled */
	int unwritable;		/* names the batch syntax cannot carry */
};

/* a word "krtctl -b" reads back as it is: not empty, no blank, no comment */
bool batch_word_ok(const char *s)
{
	return *s && *s != '#' && !strpbrk(s, " \t\n");
}

/* the genetlink command of a message; the replay hook answers every dump with one file */
static bool is_cmd(const struct nlmsghdr *nlh, u8 cmd)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	return mnl_nlmsg_get_payload_len(nlh) >= sizeof(*g) && g->cmd == cmd;
}

static int save_dev_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_DEV_MAX + 1];
	struct save *s = data;

	if (!is_cmd(nlh, KRT_CMD_DEV_GET) || nl_parse_attrs(nlh, tb, &dev_policy) ||
	    !tb[KRT_A_DEV_NAME])
		return MNL_CB_OK;
	if (dev_save(tb, s->f, s->autoenable))
		s->unwritable++;
	return MNL_CB_OK;
}

static int save_listen_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_LISTEN_MAX + 1];
	struct save *s = data;

	if (!is_cmd(nlh, KRT_CMD_LISTEN_GET) || nl_parse_attrs(nlh, tb, &listen_policy))
		return MNL_CB_OK;
	if (listen_save(tb, s->f))
		s->unwritable++;
	return MNL_CB_OK;
}

static int save_peer_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_PEER_MAX + 1];
	struct save *s = data;

	if (!is_cmd(nlh, KRT_CMD_PEER_GET) || nl_parse_attrs(nlh, tb, &peer_policy) ||
	    !tb[KRT_A_PEER_NAME])
		return MNL_CB_OK;
	if (peer_save(tb, s->f))
		s->unwritable++;
	return MNL_CB_OK;
}

/* autoenable=N: devices arrive disabled, so the enabled ones are saved too */
static bool module_autoenable(void)
{
	char c = 'Y';
	FILE *f = fopen("/sys/module/krt/parameters/autoenable", "r");

	if (f) {
		if (fread(&c, 1, 1, f) != 1)
			c = 'Y';
		fclose(f);
	}
	return c != 'N' && c != 'n' && c != '0';
}

/* Replace @name by @len bytes of @buf: a new file beside it, renamed over it. */
static int write_file(const char *name, const char *buf, size_t len)
{
	size_t n = strlen(name) + sizeof(".XXXXXX");
	char *tmp = malloc(n);
	struct stat st;
	mode_t mask;
	int fd, ret = -1;
	ssize_t w;

	if (!tmp)
		return -1;
	snprintf(tmp, n, "%s.XXXXXX", name);
	fd = mkstemp(tmp);
	if (fd < 0)
		goto out;
	mask = umask(0);
	umask(mask);
	/* the mode of the file it replaces, else what open() would give */
	if (fchmod(fd, stat(name, &st) ? 0666 & ~mask : st.st_mode & 07777))
		goto fail;
	while (len) {
		w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		buf += w;
		len -= (size_t)w;
	}
	if (fsync(fd) || close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, name))
		goto fail;
	ret = 0;
	goto out;
fail:
	ret = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = ret;
	ret = -1;
out:
	free(tmp);
	return ret;
}

/* the dumps, each into @s->f; Return: 0 or the exit status */
static int save_dumps(struct save *s)
{
	static const struct {
		u8 cmd;
		mnl_cb_t cb;
		const char *what;
	} dumps[] = {
		{ KRT_CMD_DEV_GET,	save_dev_cb,	"save: dev show" },
		{ KRT_CMD_LISTEN_GET,	save_listen_cb,	"save: listen show" },
		{ KRT_CMD_PEER_GET,	save_peer_cb,	"save: peer show" },
	};
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(dumps); i++) {
		ret = nl_talk(&krtctl, nl_msg(&krtctl, dumps[i].cmd, NLM_F_DUMP), dumps[i].cb, s);
		if (ret)
			return nl_report(ret, dumps[i].what);
	}
	return 0;
}

/* krtctl save [FILE | -] */
int cmd_save(int argc, char **argv)
{
	const char *file = argc > 0 && strcmp(argv[0], "-") ? argv[0] : NULL;
	struct save s = { .autoenable = module_autoenable() };
	char *buf = NULL;
	size_t len = 0;
	int ret;

	/* exactly "help": a prefix of it may be a file's name */
	if (argc > 0 && !strcmp(argv[0], "help")) {
		usage(stdout, "save");
		return 0;
	}
	if (argc > 1)
		return usage_error("save: unexpected argument", argv[1]);
	s.f = open_memstream(&buf, &len);
	if (!s.f) {
		fprintf(stderr, "krtctl: save: %s\n", strerror(errno));
		return 1;
	}
	fprintf(s.f, "# krt configuration, written by 'krtctl save' (krtctl %s).\n"
		"# Apply to a freshly loaded module: krtctl -b FILE (krt.service does it\n"
		"# at boot from /etc/krt/krt.conf).  Module parameters, the defaults of\n"
		"# these settings, are not part of it: /etc/modprobe.d/krt.conf.\n",
		KRTCTL_VERSION);
	ret = save_dumps(&s);
	if (fclose(s.f) && !ret) {
		fprintf(stderr, "krtctl: save: %s\n", strerror(errno));
		ret = 1;
	}
	if (!ret && !file && fwrite(buf, 1, len, stdout) != len)
		ret = 1;
	if (!ret && file && write_file(file, buf, len)) {
		fprintf(stderr, "krtctl: save: cannot write %s: %s\n", file, strerror(errno));
		ret = 1;
	}
	free(buf);
	if (!ret && s.unwritable) {
		fprintf(stderr, "krtctl: save: %d object(s) left out as comments\n", s.unwritable);
		ret = 1;
	}
	return ret;
}
