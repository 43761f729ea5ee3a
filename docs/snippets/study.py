import jax, numpy as np
import uldp_jax as ul

d, S = 64, range(8)                                     # 64 items, the first 8 sensitive
p = np.random.default_rng(0).dirichlet(np.ones(d))
res = ul.study(jax.random.key(0), {"GRR": lambda eps: ul.GRR(d, eps), "uRR": lambda eps: ul.URR(d, S, eps)},
               eps=[0.5, 1.0, 2.0, 4.0], n=[10_000, 100_000], reps=30,
               methods=("emp", "emp+thr"), p=p, metrics=("mse", "l1"))
for r in res.rows()[:4]:                                # mechanism x eps x n x method x metric
    print(f"{r['mechanism']} eps={r['eps']} n={r['n']} {r['method']} {r['metric']}: mean {r['mean']:.3g}, "
          f"se {r['se']:.2g}, theory {r['theory']:.3g}, z = {r['z']:.1f}")
res.to_csv("study.csv")                                 # plain CSV: pandas.read_csv("study.csv")
res.save("study")                                       # study.json + study.npz: ul.StudyResult.load("study")
