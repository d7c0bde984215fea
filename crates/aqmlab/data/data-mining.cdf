# Data-mining flow sizes: the distribution of flow sizes measured in a
# production data centre running data-mining (map-reduce style) jobs by
# Greenberg et al., "VL2: A Scalable and Flexible Data Center Network",
# SIGCOMM 2009 (Fig. 2, flow size distribution), in the tabulated form that
# pFabric (Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter
# Transport", SIGCOMM 2013, Fig. 4(b), "data mining" workload) used in its
# ns-2 simulations (file VL2_CDF there) and that later data-centre transport
# studies reuse. About 80 % of the flows are under 10 kB, yet most bytes are
# in the few flows of 100 MB - 1 GB: far more skewed than web-search.
# Columns: flow size in bytes, cumulative percentage of flows at or below it.
# Sizes between two points are interpolated linearly.
0 0
180 10
216 20
560 30
900 40
1100 50
1870 60
3160 70
10000 80
400000 90
3160000 95
100000000 98
1000000000 100
