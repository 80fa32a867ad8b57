"""torchscope's compiler, Python side: runtime fixes (runtime), source rewrites (rewrite) and the
measurement launcher (launch) that `torchscope fix` drives."""
