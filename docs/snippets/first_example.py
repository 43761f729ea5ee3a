import jax, numpy as np
import uldp_jax as ul

mech = ul.URR(d=8, sensitive=[0, 3], eps=1.0)        # uRR: items 0 and 3 sensitive, eps = 1
audit = ul.audit(mech)                                # reads the exact channel Q(y|x), never a sampler
print(f"audit: {audit.kind}, eps = {audit.eps:.3f}, holds = {audit.ok}, tight = {audit.tight}")

key = jax.random.key(0)
p = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05])   # the true distribution of 8 items
xs = jax.random.choice(key, 8, (100_000,), p=p)               # 100,000 users' items
ys = ul.perturb(jax.random.key(1), mech, xs)                  # int32[n] reports
p_emp = ul.estimate(mech, ys, method="emp")                   # unbiased; entries may be negative
p_thr = ul.estimate(mech, ys, method="emp+thr")               # projected onto the simplex
print("p_hat (emp+thr):", np.round(np.asarray(p_thr), 3))
print(f"TV distance (l1 / 2) to p: emp {ul.metrics.tv(p_emp, p):.4f}, emp+thr {ul.metrics.tv(p_thr, p):.4f}")
