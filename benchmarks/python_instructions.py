"""Instructions per value read from Python, for callgrind (benchmarks/RESULTS.md, python_e2e).

Opens a trial and reads, in one of python_e2e.py's orders, part of it; or nothing. Run each
under valgrind --tool=callgrind; a value's instructions are (a run's total - the total of the
run that reads nothing) / the values it read (printed last).

  PYTHONPATH=build/python valgrind --tool=callgrind /usr/bin/python3 \\
      benchmarks/python_instructions.py /work/ab-data/small-200 values

Orders: nothing; values (200 tensors' values() for every worker: 80,000 values on the small
job); by-tensor (200 tensors, every step and worker: 80,000); by-step (10 steps, every tensor
and worker: 40,220).
"""
import sys

from rulestream import create_trial


def main():
    trial = create_trial(sys.argv[1])
    order = sys.argv[2]
    values = 0
    if order == "values":
        workers = trial.workers()
        for name in trial.tensor_names()[:200]:
            tensor = trial.tensor(name)
            for worker in workers:
                for _ in tensor.values(worker=worker).values():
                    values += 1
    elif order == "by-tensor":
        for name in trial.tensor_names()[:200]:
            tensor = trial.tensor(name)
            for step in tensor.steps():
                for worker in tensor.workers(step):
                    tensor.value(step, worker=worker)
                    values += 1
    elif order == "by-step":
        for step in trial.steps()[:10]:
            for name in trial.tensor_names(step=step):
                tensor = trial.tensor(name)
                for worker in tensor.workers(step):
                    tensor.value(step, worker=worker)
                    values += 1
    elif order != "nothing":
        raise SystemExit("unknown order " + order)
    print("values", values)


if __name__ == "__main__":
    main()
