"""Typed arguments of the in-tree plugins (one module per plugin in ``framework/pluginargs/``), under the
names callers have used: strict decoding, v1 defaulting and kube-scheduler validation.

Every ``decode_*`` function takes the raw ``args`` mapping of a ``pluginConfig`` entry (``None`` → all
defaults) and the field path of that mapping (e.g. ``profiles[0].pluginConfig[1].args``), and returns
the typed args or raises ``ConfigError``. Validation messages reproduce kube-scheduler's field errors
(``<path>: Invalid value: 101: not in valid range [0, 100]``): ``ConfigError.field`` holds the path and
``ConfigError.detail`` the text after it. Several validation errors are raised together as
``ConfigErrors`` (upstream aggregates them); decoding errors (unknown field, wrong type) stop at once.

The strict-decoding, field-error, duration and name-validation helpers are ``pysched.apimachinery``'s.
"""

from __future__ import annotations

from pysched.apimachinery import (  # re-exported: configuration and extender decoding use them as pa.*
    INT32_RANGE as INT32_RANGE,
    INT64_RANGE as INT64_RANGE,
    as_list as as_list,
    as_mapping as as_mapping,
    check_fields as check_fields,
    child as child,
    did_you_mean as did_you_mean,
    dns1123_subdomain_errors as dns1123_subdomain_errors,
    duplicate as duplicate,
    field_error as field_error,
    flatten as flatten,
    forbidden as forbidden,
    format_go_duration as format_go_duration,
    get_bool as get_bool,
    get_duration as get_duration,
    get_float as get_float,
    get_int as get_int,
    get_list as get_list,
    get_str as get_str,
    get_str_list as get_str_list,
    go_quote as go_quote,
    go_value as go_value,
    index as index,
    invalid as invalid,
    json_type as json_type,
    label_name_errors as label_name_errors,
    label_value_errors as label_value_errors,
    not_supported as not_supported,
    parse_go_duration as parse_go_duration,
    plain as plain,
    qualified_name_errors as qualified_name_errors,
    raise_all as raise_all,
    regex_error as regex_error,
    required as required,
)
from pysched.errors import ConfigError as ConfigError, ConfigErrors as ConfigErrors
from pysched.framework.pluginargs import DECODERS as DECODERS, PARSERS as PARSERS, ArgsParser as ArgsParser
from pysched.framework.pluginargs.balancedallocation import (
    NodeResourcesBalancedAllocationArgs as NodeResourcesBalancedAllocationArgs,
    parse_balanced_allocation_args as parse_balanced_allocation_args,
)
from pysched.framework.pluginargs.common import (
    API_GROUP as API_GROUP,
    API_VERSION as API_VERSION,
    MAX_CUSTOM_PRIORITY_SCORE as MAX_CUSTOM_PRIORITY_SCORE,
    ResourceSpec as ResourceSpec,
    UtilizationShapePoint as UtilizationShapePoint,
    default_resources as default_resources,
)
from pysched.framework.pluginargs.defaultpreemption import (
    DefaultPreemptionArgs as DefaultPreemptionArgs,
    parse_default_preemption_args as parse_default_preemption_args,
)
from pysched.framework.pluginargs.dynamicresources import (
    DEFAULT_FILTER_TIMEOUT_SECONDS as DEFAULT_FILTER_TIMEOUT_SECONDS,
    DynamicResourcesArgs as DynamicResourcesArgs,
    parse_dynamic_resources_args as parse_dynamic_resources_args,
)
from pysched.framework.pluginargs.interpodaffinity import (
    InterPodAffinityArgs as InterPodAffinityArgs,
    parse_inter_pod_affinity_args as parse_inter_pod_affinity_args,
)
from pysched.framework.pluginargs.nodeaffinity import (
    NodeAffinityArgs as NodeAffinityArgs,
    parse_node_affinity_args as parse_node_affinity_args,
)
from pysched.framework.pluginargs.noderesourcesfit import (
    SCORING_STRATEGY_TYPES as SCORING_STRATEGY_TYPES,
    NodeResourcesFitArgs as NodeResourcesFitArgs,
    ScoringStrategy as ScoringStrategy,
    parse_node_resources_fit_args as parse_node_resources_fit_args,
)
from pysched.framework.pluginargs.podtopologyspread import (
    PodTopologySpreadArgs as PodTopologySpreadArgs,
    parse_pod_topology_spread_args as parse_pod_topology_spread_args,
)
from pysched.framework.pluginargs.volumebinding import (
    VolumeBindingArgs as VolumeBindingArgs,
    parse_volume_binding_args as parse_volume_binding_args,
)
