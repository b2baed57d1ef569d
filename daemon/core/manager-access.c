/* SPDX-License-Identifier: GPL-2.0-only */
/* Who may do what: root and the members of admin_group everything; any other user that can
 * connect only what it could do with ptrace (addrspace/proc-creds), to the processes it could
 * trace itself, and sees only those. */
#include <assert.h>
#include <errno.h>
#include <grp.h>
#include <string.h>
#include "log.h"
#include "manager.h"
#include "proc-creds.h"
#include "server.h"
#include "target.h"
#include "util.h"

bool manager_peer_admin(const struct manager *m, const struct server_request *sreq)
{
        const struct ucred *peer = server_request_peer(sreq);
        const struct group *g;

        assert(m);
        if (peer->uid == 0)
                return true;
        if (!m->config.admin_group)
                return false;
        g = getgrnam(m->config.admin_group);
        return g && server_request_peer_in_group(sreq, g->gr_gid);
}

struct peer_view manager_peer_view(const struct manager *m, const struct server_request *sreq)
{
        bool admin = manager_peer_admin(m, sreq);

        return (struct peer_view) {
                .peer = server_request_peer(sreq), .admin = admin, .yama = admin ? 0 : proc_creds_yama_scope(),
        };
}

/* Why peer may not trace a process of creds c (NULL: it may), Yama's ptrace_scope being yama; live:
 * pid is alive, check its descent too. */
static const char *refusal(const struct ucred *peer, int yama, const struct proc_creds *c, pid_t pid, bool live)
{
        bool descendant = live && yama == 1 && proc_creds_descends_from(pid, peer->pid);

        return proc_creds_ptrace_refusal(c, peer->uid, peer->gid, yama == 1 && !live ? 0 : yama, descendant);
}

int manager_peer_may_trace(const struct manager *m, const struct server_request *sreq, pid_t pid, char **error)
{
        const struct ucred *peer = server_request_peer(sreq);
        struct proc_creds c;
        const char *why;
        int r;

        assert(m);
        if (manager_peer_admin(m, sreq))
                return 0;
        r = proc_creds_read(pid, &c);
        if (r == -ESRCH)
                return error_set(error, -ESRCH, "No process %d", (int)pid);
        if (r < 0)
                return error_set(error, -EPERM, "Cannot tell whether uid %u may trace pid %d: %s", (unsigned)peer->uid,
                                 (int)pid, strerror(-r));
        why = refusal(peer, proc_creds_yama_scope(), &c, pid, true);
        if (!why)
                return 0;
        log_info("Refused uid %u (pid %d) pid %d: %s", (unsigned)peer->uid, (int)peer->pid, (int)pid, why);
        return error_set(error, -EPERM, "Not permitted to trace pid %d: %s (as ptrace would refuse; root or "
                         "admin_group may)", (int)pid, why);
}

bool manager_peer_view_sees(const struct peer_view *v, const struct target *t)
{
        struct proc_creds c;

        assert(v);
        assert(t);
        if (v->admin)
                return true;
        if (t->kernel)
                return false;
        /* a live one as it is now (its pid may have gone to another process meanwhile: it is
         * looked at through the target's own pidfd-checked life, then its creds now) */
        if (!target_phase_exited(t->phase) && proc_creds_read(t->pid, &c) >= 0)
                return refusal(v->peer, v->yama, &c, t->pid, true) == NULL;
        return t->creds_read && refusal(v->peer, v->yama, &t->creds, t->pid, false) == NULL;
}

bool manager_peer_sees(const struct manager *m, const struct server_request *sreq, const struct target *t)
{
        struct peer_view v = manager_peer_view(m, sreq);

        return manager_peer_view_sees(&v, t);
}

bool manager_target_beyond_asker(const struct target *t)
{
        assert(t);
        return t->asked_by_user && !t->kernel && t->creds_read &&
               proc_creds_ptrace_refusal(&t->creds, t->asker_uid, t->asker_gid, 0, true) != NULL;
}
