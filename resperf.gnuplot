# time target_qps actual_qps responses_per_sec failures_per_sec avg_latency connections conn_avg_latency
  0.250 16666.67 16666.00 16666.00     0.00 0.000037     0.00 0.000000
  0.750 50000.00 50000.00 49684.00     0.00 0.000049     0.00 0.000000
  1.250 83333.33 82970.00 82052.00     0.00 0.000053     0.00 0.000000
