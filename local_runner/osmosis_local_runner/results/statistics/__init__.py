"""The numbers a run or a comparison stands on: pass@k and means, intervals, paired
statistics, power, slices, usage and cost, a sweep along training."""
