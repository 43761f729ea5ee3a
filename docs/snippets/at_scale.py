import jax, numpy as np
import uldp_jax as ul

d, eps = 625, np.array([0.5, 1.0, 2.0, 4.0])
p = np.random.default_rng(0).dirichlet(np.ones(d))
grid = jax.vmap(lambda e: ul.URAP(d, range(15), e))(eps)      # 4 uRAP mechanisms as one batched pytree
res = ul.simulate(jax.random.key(0), grid, p=p, n=10**6, reps=100, methods=("emp", "emp+thr"))
tv = ul.metrics.tv(res.estimates["emp+thr"], p)               # [4 eps, 100 repetitions]
for e, m in zip(eps, np.asarray(tv).mean(axis=-1)):
    print(f"uRAP eps = {e}: TV (l1 / 2), mean of 100 repetitions of 10^6 users = {m:.4f}")
