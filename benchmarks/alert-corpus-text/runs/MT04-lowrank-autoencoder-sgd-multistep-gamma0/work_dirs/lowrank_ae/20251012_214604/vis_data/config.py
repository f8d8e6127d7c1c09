model = dict(type='AutoEncoder')
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.02))
param_scheduler = dict(type='MultiStepLR', by_epoch=True, milestones=[3], gamma=0.0)
train_cfg = dict(by_epoch=True, max_epochs=12, val_interval=1)
default_hooks = dict(logger=dict(type='LoggerHook', interval=10))
log_processor = dict(window_size=10, by_epoch=True)
vis_backends = [dict(type='LocalVisBackend')]
