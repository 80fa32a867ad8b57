# The job's own sitecustomize: must still run when the collector's bridge shadows it.
import os

os.environ["FAULT_OWN_SITECUSTOMIZE"] = "ran"
